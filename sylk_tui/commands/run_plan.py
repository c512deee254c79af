"""How ``sylk run`` follows a plan: the progression as it happens, then the plan's end.

A request for a change goes to the Architect, whose plan is approved (``--yes``), or
waits for the user. An approved plan's DAG runs in the
engine after the Architect's turn has ended, so the run stays until the DAG, and what
follows it in the session's phase, is over; closing the engine earlier would stop it.
Each step is printed on stderr as one line, so stdout stays the answers: the plan
proposed and approved, each task starting, passing or failing, each pipeline
transition (running, inspecting, testing, loop by loop; back to running names the
check that sent it back and its first finding), each phase move.

Without ``--yes``, a person at a terminal is asked whether to approve the plan; with no
terminal the run says how to approve it later. The exit status says whether the plan
completed: 0 only when the session's phase reached ``complete``;
:data:`EXIT_PLAN_INCOMPLETE` with the reason otherwise (waiting for approval, a failed
or cancelled DAG, a phase that stopped short).

``sylk run`` never resumes DAGs of other sessions (it does not call
``Engine.resume_dags``): a one-shot command must not start work nobody asked it for.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO

from backend.events import (
    DagStatusChanged,
    EngineEvent,
    EngineNotice,
    MessageAppended,
    PlanChanged,
    SessionPhaseChanged,
)
from backend.messages import MessageType
from backend.redaction import Redactor
from backend.sessions.phases import SessionPhase
from sylk_tui.commands.exit_codes import EXIT_PLAN_INCOMPLETE

if TYPE_CHECKING:
    from backend.engine import Engine

Confirm = Callable[[str], Awaitable[bool]]
PLAN_STATUS_SAID = {
    "awaiting_approval": "proposed, awaiting approval",
    "approved": "approved",
    "rejected": "rejected",
    "superseded": "superseded",
    "draft": "stored as a draft",
}


class PlanProgress:
    """Prints the plan's steps as the engine publishes them, one line each."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._redactor = Redactor()
        self._out = out
        self.plans: dict[str, str] = {}  # plan id -> its latest status
        self.dags: list[str] = []  # plans whose DAG this run saw start
        self.summary: str | None = None  # the Architect's completion summary
        self.refused = 0  # edits and commands the approval policy refused in this run
        self.broken_line = False  # an answer is being streamed on stdout, mid-line

    def use(self, redactor: Redactor) -> None:
        self._redactor = redactor

    def say(self, text: str) -> None:
        out = self._out or sys.stderr
        if self.broken_line and out is sys.stderr:
            print(file=sys.stdout, flush=True)  # the streamed answer's line ends first
            self.broken_line = False
        print(f"▸ {self._redactor.text(text)}", file=out, flush=True)

    def event(self, event: EngineEvent) -> None:
        if isinstance(event, PlanChanged):
            self.plans[event.plan_id] = event.status
            said = PLAN_STATUS_SAID.get(event.status, event.status)
            self.say(f"plan {event.plan_id} v{event.version}: {said}")
        elif isinstance(event, SessionPhaseChanged):
            self.say(f"phase: {event.old_phase.value} -> {event.phase.value} ({event.reason})")
        elif isinstance(event, EngineNotice) and event.text.startswith("Plan "):
            self.say(event.text)  # a pipeline's transition (back to running says why)
        elif isinstance(event, MessageAppended) and _is_dag_note(event):
            self.say(str(event.message.payload.get("text", "")))
        elif (
            isinstance(event, MessageAppended)
            and event.message.payload.get("response_type") == "WORKFLOW_COMPLETE"
        ):
            self.summary = str(event.message.payload.get("text", ""))
        elif isinstance(event, DagStatusChanged) and event.node_id is None:
            if event.status == "running" and event.plan_id not in self.dags:
                self.dags.append(event.plan_id)
            if event.error:
                self.say(f"plan {event.plan_id}: the DAG {event.status}: {event.error}")


def _is_dag_note(event: MessageAppended) -> bool:
    """A notice of a DAG's transition or of the session's QA after it."""
    message = event.message
    payload = message.payload
    return message.type is MessageType.SYSTEM_NOTICE and bool(payload.get("dag") or
                                                              payload.get("qa"))  # fmt: skip


async def follow_plans(
    engine: Engine,
    session_id: str,
    progress: PlanProgress,
    *,
    flags: str = "",
    confirm: Confirm | None = None,
) -> int | None:
    """After the request's turn: wait for the plan it started, and say how it ended.

    None when the request proposed no plan (the plain answer decides the exit status);
    otherwise the exit status, 0 only when the session's phase is ``complete``.
    ``flags``: what the command to approve later must repeat (``--script FILE``).
    ``confirm``: asks the person at the terminal whether to approve a waiting plan
    (None: nobody to ask, the run says how to approve it instead).
    """
    # Only the plans this run proposed, approved or started: a DAG another process left
    # "running" is not this run's (and it is not resumed here).
    ours = [p for p, status in progress.plans.items() if status == "approved"]
    running = list(dict.fromkeys([*ours, *progress.dags]))
    for plan_id in running:
        await engine.wait_dag(session_id, plan_id)  # also one its approval is starting
    if running:
        await engine.wait_qa(session_id)  # the session's QA after a passed DAG, fixes too
    waiting = [p for p, status in progress.plans.items() if status == "awaiting_approval"]
    if not running and not progress.plans:
        return None
    phase = engine.session_phase(session_id)
    if phase is SessionPhase.COMPLETE:
        if progress.summary:
            print(progress.summary, flush=True)  # the plan's answer: the Architect's summary
        if progress.refused:  # "complete" without what was refused is not what was asked
            progress.say(
                f"the plan completed WITHOUT {progress.refused} edit(s) or command(s) the "
                "approval policy refused (above): run it with --approval auto-edit or --yes"
            )
            return EXIT_PLAN_INCOMPLETE
        progress.say("the plan completed")
        return 0
    if waiting and not running and confirm is not None:
        plan = waiting[-1]
        if await confirm(f"Approve plan {plan} and run it? [y/N] "):
            await engine.submit(session_id, f"/plan approve {plan}")
            return await follow_plans(engine, session_id, progress, flags=flags)
    if waiting and not running:
        name = shlex.quote(engine.get_session(session_id).name)
        plan = waiting[-1]
        again = f"sylk run --session {name} {flags}".rstrip()
        progress.say(
            f"plan {plan} waits for your approval: approve it with "
            f"{again} --yes '/plan approve {plan}', or run the request again with --yes "
            "(in the TUI: /plan show, /plan approve)"
        )
        return EXIT_PLAN_INCOMPLETE
    ended = [d for d in await engine.dag_status(session_id) if d["plan_id"] in running]
    progress.say(f"the plan did not complete: {_why(ended, phase)}")
    return EXIT_PLAN_INCOMPLETE


def _why(dags: list[dict[str, Any]], phase: SessionPhase) -> str:
    if not dags:
        return f"no DAG ran (phase {phase.value})"
    last = dags[-1]
    status = last.get("status")
    failed = [f"{n['id']}: {n.get('error', n['status'])}" for n in last.get("nodes", [])
              if n.get("status") in ("failed", "cancelled", "skipped")]  # fmt: skip
    if status != "passed":
        detail = "; ".join(failed) or "no task failed"
        return f"its DAG {status} ({detail}); the session is back in {phase.value}"
    return f"its DAG passed, but the session stopped in phase {phase.value}"


async def ask_at_terminal(prompt: str) -> bool:
    """The person at the terminal says yes (``y``/``yes``); anything else, or EOF, is no."""

    def ask() -> str:
        print(prompt, end="", file=sys.stderr, flush=True)
        try:
            return input()
        except EOFError:
            return ""

    return (await asyncio.to_thread(ask)).strip().lower() in ("y", "yes")
