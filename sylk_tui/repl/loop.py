"""The repl's loop: read a line, send it to the engine, print what comes, again.

One request runs at a time, in the session on the prompt (``sylk:NAME>``); the
session follows ``/session switch`` and ``/session new``. While a request runs, the
engine's questions (approvals, plan reviews, choices) are asked inline as they come,
and ctrl+c stops the request's turn (not the repl). A question that comes while the
prompt waits for a line (a plan's task, in the background) interrupts the prompt,
which comes back afterwards with what was typed. A plan's progress prints as one line
per step whenever it happens.

A refused line (an unknown command, an unknown session, a session that is not
active) prints the engine's message and the loop goes on; nothing the user types
ends the repl but ctrl+d, the end of input, or ``/quit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO, cast

from backend.agents.tool_actions import terminal_text
from backend.errors import SylkError
from backend.events import DagStatusChanged, EngineEvent, PlanChanged, QuestionAsked
from sylk_tui.commands.run_plan import PlanProgress
from sylk_tui.repl import questions
from sylk_tui.repl.answers import TurnPrinter, say
from sylk_tui.repl.completion import LOCAL_COMMANDS
from sylk_tui.repl.line_input import LineSource

if TYPE_CHECKING:
    from backend.engine import Engine

EXIT_OK = 0


class _LiveStdout:
    """``sys.stdout`` as it is when written to (the prompt redirects it while drawn), and
    only text a terminal shows as text: a plan's lines carry a model's words (a node's
    prompt, a failure's message). ``before`` ends a streamed answer's line first."""

    def __init__(self, before: Callable[[], None]) -> None:
        self._before = before

    def write(self, text: str) -> int:
        self._before()
        say(terminal_text(text), end="")
        return len(text)

    def flush(self) -> None:
        """Each write is flushed already."""


class Repl:
    def __init__(self, engine: Engine, lines: LineSource) -> None:
        self._engine = engine
        self._lines = lines
        self._questions: asyncio.Queue[QuestionAsked] = asyncio.Queue()
        self._turn: TurnPrinter | None = None
        self._progress = PlanProgress(out=cast(TextIO, _LiveStdout(self._end_answer_line)))
        self._running: set[tuple[str, str]] = set()  # (session, plan) of DAGs approved, running
        self._progress.use(engine.redactor)
        self.session_id = ""

    async def run(self, session_id: str) -> int:
        self.session_id = session_id
        engine = self._engine
        detach_questions = engine.attach_questions()
        stop_listening = engine.events.add_listener(self._event)
        try:
            while True:
                line = await self._next_line()
                if line is None:
                    say()  # the shell's prompt comes back on a line of its own
                text = "/quit" if line is None else line.strip()
                if text.lower() in LOCAL_COMMANDS:
                    await self._finish_plans()
                    return EXIT_OK
                if text:
                    await self._send(text)
        finally:
            stop_listening()
            detach_questions()
            self._lines.close()

    def _prompt(self) -> str:
        try:
            name = self._engine.get_session(self.session_id).name
        except SylkError:
            name = "?"
        return f"sylk:{name}> "

    def _event(self, event: EngineEvent) -> None:
        if isinstance(event, QuestionAsked):
            self._questions.put_nowait(event)
            return
        if self._turn is not None:
            self._turn.event(event)
        if isinstance(event, PlanChanged) and event.status == "approved" and event.session_id:
            self._running.add((event.session_id, event.plan_id))  # its DAG is starting
        if isinstance(event, DagStatusChanged) and event.node_id is None and event.session_id:
            dag = (event.session_id, event.plan_id)
            (self._running.add if event.status == "running" else self._running.discard)(dag)
        self._progress.event(event)

    def _end_answer_line(self) -> None:
        if self._turn is not None:
            self._turn.end_line()

    async def _next_line(self) -> str | None:
        """The next line typed; questions that come meanwhile are asked first."""
        while True:
            await self._ask_waiting()
            reading = asyncio.ensure_future(self._lines.read(self._prompt()))
            asked = asyncio.ensure_future(self._questions.get())
            done, _ = await asyncio.wait({reading, asked}, return_when=asyncio.FIRST_COMPLETED)
            if reading in done:
                asked.cancel()
                return reading.result()
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            say()
            self._questions.put_nowait(asked.result())

    async def _ask_waiting(self) -> None:
        while not self._questions.empty():
            asked = self._questions.get_nowait()
            if asked.answer.done():
                continue  # answered elsewhere, or withdrawn
            if self._turn is not None:
                self._turn.end_line()
            value = await questions.answer(asked.question, self._lines.ask)
            self._engine.answer_question(asked.question_id, value)

    async def _send(self, text: str) -> None:
        engine, printer = self._engine, TurnPrinter(self._engine.redactor)
        self._turn = printer
        self._progress.broken_line = False
        submit = asyncio.ensure_future(engine.submit(self.session_id, text))
        try:
            while not submit.done():
                with self._ctrl_c(self._stop_the_turn):
                    asked = asyncio.ensure_future(self._questions.get())
                    await asyncio.wait({submit, asked}, return_when=asyncio.FIRST_COMPLETED)
                if asked.done():
                    self._questions.put_nowait(asked.result())
                    await self._ask_waiting()
                else:
                    asked.cancel()
            recorded = submit.result()
        except SylkError as exc:  # refused (a session that is not active, ...): said, not raised
            printer.finish(None)
            say(f"error: {engine.redactor.text(str(exc))}")
            return
        finally:
            self._turn = None
        printer.finish(recorded[-1] if recorded else None)
        self._follow_active_session()

    async def _finish_plans(self) -> None:
        """Leaving with a plan's DAG still running: closing the engine would stop it, so
        wait for it and the session's QA after it (questions still asked); ctrl+c leaves
        at once (an interrupted DAG runs again, from where it stopped, when the TUI
        starts)."""
        if not self._running:
            return
        plans = ", ".join(sorted(plan for _, plan in self._running))
        say(f"▸ waiting for plan {plans} to finish (ctrl+c leaves now)")
        waiting = asyncio.ensure_future(self._wait_dags())
        with contextlib.suppress(asyncio.CancelledError):
            while not waiting.done():
                with self._ctrl_c(waiting.cancel):
                    asked = asyncio.ensure_future(self._questions.get())
                    await asyncio.wait({waiting, asked}, return_when=asyncio.FIRST_COMPLETED)
                if asked.done():
                    self._questions.put_nowait(asked.result())
                    await self._ask_waiting()
                else:
                    asked.cancel()

    async def _wait_dags(self) -> None:
        while self._running:
            session_id, plan_id = next(iter(self._running))
            await self._engine.wait_dag(session_id, plan_id)
            self._running.discard((session_id, plan_id))
            await self._engine.wait_qa(session_id)

    def _follow_active_session(self) -> None:
        """``/session switch`` or ``/session new`` moved the engine's active session."""
        active = self._engine.active_session()
        if active is not None and active.id != self.session_id:
            self.session_id = active.id

    def _stop_the_turn(self) -> None:
        if self._engine.cancel_turn(self.session_id):
            say("\n(stopping…)")

    @contextlib.contextmanager
    def _ctrl_c(self, then: Callable[[], object]) -> Iterator[None]:
        """ctrl+c (SIGINT: no prompt reads keys meanwhile) calls ``then``."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, then)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)
