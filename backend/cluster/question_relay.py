"""A worker's questions (an approval in ``ask`` mode, a pipeline's ignore-or-fail) asked
on the driver, where the user is, and the answers carried back.

On the worker, :class:`WorkerQuestions` stands in for a front end on the worker engine's
:class:`~backend.questions.QuestionBoard`: each question it sees goes to the driver
through the job's event queue with a reply queue of its own (a Ray queue made for that
question, so a worker that asks nothing costs nothing), and the answer that comes back
settles it as if the user had answered there. On the driver,
:class:`DriverQuestions` asks each one on the driver engine's board, in the user's
session, so the TUI's approvals inbox shows it like any other; the user's answer (or
``None``: declined, withdrawn, nobody attached) is put on the reply queue. When the node's
run ends, questions still open for it are withdrawn on both sides. The worker's answer
is parsed by its own approval gate, never trusted as given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from backend.events import ChoiceQuestion, EngineEvent, QuestionAsked

log = logging.getLogger(__name__)
Send = Callable[[tuple[str, str, Any]], None]
AskDriver = Callable[[ChoiceQuestion, str], Awaitable[str | None]]
ASK = "ask"  # the event kind on the job's queue: {"question": ..., "reply": a Ray queue}


class WorkerQuestions:
    """On the worker: the engine's questions relayed to the driver (an attached front end)."""

    def __init__(self, run_key: str, send: Send) -> None:
        self._run_key = run_key
        self._send = send
        self._relays: set[asyncio.Task[None]] = set()

    def attach(
        self, attach_board: Callable[[], Callable[[], None]],
        add_listener: Callable[[Callable[[EngineEvent], None]], Callable[[], None]],
    ) -> Callable[[], None]:  # fmt: skip
        """Answer the board's questions from the driver; returns the detach."""
        detach_board = attach_board()
        remove = add_listener(self._on_event)

        def detach() -> None:
            remove()
            detach_board()  # withdraws what is still open here
            for relay in list(self._relays):
                relay.cancel()

        return detach

    def _on_event(self, event: EngineEvent) -> None:
        if not isinstance(event, QuestionAsked):
            return
        relay = asyncio.get_running_loop().create_task(
            self._relay(event), name=f"ray-question-{event.question_id}"
        )
        self._relays.add(relay)
        relay.add_done_callback(self._relays.discard)
        # Settled here (withdrawn, the pipeline stopped): the relay stops waiting.
        event.answer.add_done_callback(lambda _: relay.cancel())

    async def _relay(self, asked: QuestionAsked) -> None:
        from ray.util.queue import Queue

        reply = Queue(maxsize=1, actor_options={"num_cpus": 0})
        try:
            self._send((self._run_key, ASK, {"question": asked.question, "reply": reply}))
            value = await reply.get_async()
            if not asked.answer.done():
                asked.answer.set_result(value if isinstance(value, str) else None)
        except asyncio.CancelledError:
            raise
        except Exception:  # the driver or its queue is gone: declined, as nobody answered
            log.warning("a question relayed to the driver got no answer", exc_info=True)
            if not asked.answer.done():
                asked.answer.set_result(None)
        finally:
            reply.shutdown(force=True)


class DriverQuestions:
    """On the driver: each relayed question asked on the user's board, per node run."""

    def __init__(self, ask: AskDriver) -> None:
        self._ask = ask
        self._open: dict[str, set[asyncio.Task[None]]] = {}

    def relay(self, run_key: str, session_id: str, payload: dict[str, Any]) -> None:
        """Ask ``payload["question"]`` in ``session_id``; the answer to its reply queue."""
        question, reply = payload.get("question"), payload.get("reply")
        if not isinstance(question, ChoiceQuestion) or reply is None:
            log.warning("a malformed question from a ray worker was ignored")
            return
        task = asyncio.get_running_loop().create_task(
            self._answer(question, session_id, reply), name=f"ray-ask-{run_key}"
        )
        tasks = self._open.setdefault(run_key, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _answer(self, question: ChoiceQuestion, session_id: str, reply: Any) -> None:
        try:
            value = await self._ask(question, session_id)
        except asyncio.CancelledError:
            value = None  # the run ended first: the worker hears a decline, if it still waits
            with contextlib.suppress(Exception):
                reply.actor.put_nowait.remote(value)
            raise
        try:
            await reply.put_async(value, timeout=30)
        except Exception:  # the worker stopped waiting (its run ended): nothing to tell
            log.info("a ray worker's question was answered after it stopped waiting")

    async def finished(self, run_key: str) -> None:
        """The node's run ended: its questions still open are withdrawn."""
        tasks = self._open.pop(run_key, set())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
