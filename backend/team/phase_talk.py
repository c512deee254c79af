"""Talking to the team by phase: status, stop, resume, revise, and questions about a plan.

The seed's "Phase-Based User Interaction". While a plan's DAG runs the user may ask how
it goes (``architect.status.update``: each task's state, what runs and for how long,
the live pipelines, what waits on the user; no model needed), stop it, or revise it
("actually, also add X": the DAG stops and the Architect writes a new version of the
plan for approval). While a plan waits for approval the user may ask about it ("why
three levels?": the Architect answers with the plan in its request; with no model the
plan's own words, said to be just that) or change it (the same revision path).

``pause`` is not offered: the scheduler has no way to hold new node starts while the
running ones finish, and a pause that cancels the running nodes would be a stop under
another name. ``resume`` runs a stopped plan again: tasks that passed stay passed
(the DAG's node records are kept per plan version). A *revised* plan is a new version
and runs as a new DAG: its tasks run again, those that passed before included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from backend.archive.plan_book import StoredPlan
from backend.errors import ErrorKind, SylkError
from backend.guide.routing.phase_rules import FEEDBACK_MAX, PhaseView
from backend.messages import Message, MessageType
from backend.orchestration import DagStateStore, NodeStatus
from backend.plans.desk import PlanDesk
from backend.plans.review import OPEN, PlanningNeedsModelError, PlanStatus, render_plan
from backend.sessions.models import Session
from backend.sessions.phases import SessionPhase
from backend.skills.builtin.teams import InterruptParams, StatusParams
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext, SkillResult
from backend.team.wiring import install_handler

Record = Message[dict[str, Any]]
ARCHITECT = "architect"
Action = Literal["stop", "resume", "revise"]


class NothingRunningError(SylkError):
    """An interrupt with no plan running in the session (or none to resume or revise)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, action: str, detail: str) -> None:
        super().__init__(
            f"nothing to {action}: {detail}",
            help_hint="/plan lists the session's plans; a plan runs once it is approved",
            details={"reason": "nothing_running", "action": action},
        )


class NoRevisionError(SylkError):
    """The Architect answered a revision request without storing a new version."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, plan_id: str, version: int) -> None:
        super().__init__(
            f"the Architect answered without revising plan {plan_id!r} (still version {version})",
            help_hint=f"say what to change again, or /plan show {plan_id}",
            details={"reason": "no_revision", "plan_id": plan_id, "version": version},
        )


class TalkSessions(Protocol):
    """The engine's session service, as far as talking needs it."""

    def get(self, session_id: str) -> Session: ...

    async def append(self, message: Record) -> Record: ...


class DagRuns(Protocol):
    """The engine's running DAGs (``DagWork``)."""

    def running(self, session_id: str) -> str | None: ...

    async def status(self, session_id: str, plan_id: str | None = None) -> list[dict[str, Any]]: ...

    async def cancel(self, session_id: str, plan_id: str) -> dict[str, Any]: ...

    async def execute(self, session_id: str, plan_id: str) -> dict[str, Any]: ...

    def dag_id(self, session_id: str, plan_id: str, version: int) -> str: ...

    @property
    def store(self) -> DagStateStore: ...


@dataclass
class PhaseTalk:
    sessions: TalkSessions
    desk: PlanDesk
    dags: DagRuns
    ask_architect: Callable[[str, str], Awaitable[Record]]  # (session, text): its recorded answer
    has_model: Callable[[], bool]  # is a model configured for the Architect?
    waiting: Callable[[str], list[str]] = lambda _sid: []  # questions open for the user
    pipelines: Callable[[str], list[str]] | None = None  # one line per live pipeline

    # -- what the router sees ------------------------------------------------------------
    async def view(self, session_id: str) -> PhaseView | None:
        try:
            session = self.sessions.get(session_id)
        except SylkError:
            return None
        running = self.dags.running(session.id)
        open_plan = None if running else await self._open_plan(session.id)
        stopped = None
        if running is None and open_plan is None and session.phase is SessionPhase.PLANNING:
            stopped = await self._stopped_plan(session.id)
        return PhaseView(session.phase.value, running, open_plan, stopped)

    # -- status ---------------------------------------------------------------------------
    async def status(self, session_id: str, message: str | None = None) -> dict[str, Any]:
        """The session's work as the user should see it; ``message`` is kept as the
        Architect's status note in the transcript."""
        session = self.sessions.get(session_id)
        running = self.dags.running(session.id)
        dags = await self.dags.status(session.id, running) if running else []
        if not dags:  # nothing runs: the newest DAG the session ran, if any
            dags = (await self.dags.status(session.id))[-1:]
        lines = [f"Phase: {session.phase.value}"]
        for dag in dags:
            lines += dag_lines(dag, live=dag.get("plan_id") == running)
        if self.pipelines is not None:
            lines += [f"  pipeline {line}" for line in self.pipelines(session.id)]
        waits = [*await self._open_lines(session.id), *self.waiting(session.id)]
        if running is None and session.phase is SessionPhase.PLANNING:
            stopped = await self._stopped_plan(session.id)
            if stopped is not None:
                waits.append(f'plan {stopped} stopped: say what to change, or "resume"')
        lines.append("Waiting on you: " + ("; ".join(waits) if waits else "nothing"))
        if not dags and not running:
            lines.insert(1, "No plan has run in this session yet.")
        text = "\n".join(lines)
        if message:
            await self._note(session.id, message.strip()[:FEEDBACK_MAX], status_note=True)
        return {"text": text, "phase": session.phase.value, "running": running,
                "dags": dags, "waiting": waits}  # fmt: skip

    # -- interrupts -------------------------------------------------------------------------
    async def interrupt(
        self, session_id: str, action: Action, *, feedback: str = "", reason: str = ""
    ) -> dict[str, Any]:
        if action == "stop":
            return await self.stop(session_id, reason)
        if action == "resume":
            return await self.resume(session_id)
        return await self.revise(session_id, feedback)

    async def stop(self, session_id: str, reason: str = "") -> dict[str, Any]:
        """Cancel the running DAG; the phase goes back to planning; the Architect waits."""
        sid = self.sessions.get(session_id).id
        plan_id = self.dags.running(sid)
        if plan_id is None:
            raise NothingRunningError("stop", "no plan runs in this session")
        dag = await self.dags.cancel(sid, plan_id)
        said = f" ({reason.strip()[:200]})" if reason.strip() else ""
        text = (
            f"Stopped plan {plan_id}{said}. {tally(dag)}. I await your instructions: say what "
            f'to change ("also add ...") for a revised plan, or "resume" to run the rest.'
        )
        await self._note(sid, text, interrupt="stop", plan_id=plan_id)
        return {"action": "stop", "plan_id": plan_id, "text": text, "dag": dag}

    async def resume(self, session_id: str) -> dict[str, Any]:
        """Run a stopped plan again; its passed tasks are not run again."""
        sid = self.sessions.get(session_id).id
        if self.dags.running(sid) is not None:
            raise NothingRunningError("resume", f"plan {self.dags.running(sid)} is running")
        stopped = [d for d in await self.dags.status(sid) if d.get("status") != "passed"]
        if not stopped:
            raise NothingRunningError("resume", "no stopped plan in this session")
        plan_id = str(stopped[-1]["plan_id"])
        dag = await self.dags.execute(sid, plan_id)
        text = f"Resumed plan {plan_id}: {tally(dag)}; tasks that passed do not run again."
        await self._note(sid, text, interrupt="resume", plan_id=plan_id)
        return {"action": "resume", "plan_id": plan_id, "text": text, "dag": dag}

    async def revise(self, session_id: str, feedback: str) -> dict[str, Any]:
        """Stop what runs, then the Architect writes a new version with ``feedback``."""
        sid = self.sessions.get(session_id).id
        feedback = feedback.strip()[:FEEDBACK_MAX]
        if not feedback:
            raise NothingRunningError("revise", "say what to change")
        running = self.dags.running(sid)
        plan = await self._plan_to_revise(sid, running)
        if not self.has_model():  # checked before anything is stopped
            raise PlanningNeedsModelError()
        stopped: dict[str, Any] | None = None
        if running is not None:
            stopped = await self.dags.cancel(sid, running)
        plan = await self.desk.latest(sid, plan.plan_id)
        if plan.status == PlanStatus.APPROVED:  # its DAG stopped or failed: it may change
            self.desk.reopen(sid, plan.plan_id, plan.version)
        ran = f" Its DAG was stopped: {tally(stopped)}." if stopped else ""
        await self.ask_architect(sid, revision_request(plan, feedback, ran))
        now = await self.desk.latest(sid, plan.plan_id)
        if now.version == plan.version:
            raise NoRevisionError(plan.plan_id, plan.version)
        kept = await self._carry_over(sid, plan.plan_id, plan.version, now.version)
        text = (f"Plan {now.plan_id} version {now.version} ({now.status.replace('_', ' ')}) "
                f"revises version {plan.version} with: {feedback}. /plan show {now.plan_id}; "
                f"\"approve\" runs it.")  # fmt: skip
        if kept:
            text += (
                f" Tasks passed before are not run again if the new version keeps them "
                f"as they were: {', '.join(kept)}."
            )
        return {"action": "revise", "plan_id": now.plan_id, "version": now.version,
                "status": now.status, "text": text, "stopped": stopped, "kept": kept}  # fmt: skip

    # -- questions about the plan ----------------------------------------------------------
    async def why(self, session_id: str, question: str) -> dict[str, Any]:
        """The Architect answers a question about the plan waiting for approval."""
        sid = self.sessions.get(session_id).id
        plan_id = await self._open_plan(sid)
        if plan_id is None:
            raise NothingRunningError("explain", "no plan waits for your approval")
        plan = await self.desk.latest(sid, plan_id)
        if not self.has_model():
            text = (f"No model is configured for the Architect, so nobody can reason about "
                    f"your question; here is what plan {plan_id} itself says.\n"
                    f"{plan_rationale(plan)}")  # fmt: skip
            return {"plan_id": plan_id, "answered_by": "plan", "text": text}
        reply = await self.ask_architect(sid, question_request(plan, question))
        text = f"The Architect answered about plan {plan_id} (version {plan.version}) above."
        return {"plan_id": plan_id, "answered_by": ARCHITECT, "text": text,
                "answer": str(reply.payload.get("text", ""))}  # fmt: skip

    # -- the engine's ``phase`` command ---------------------------------------------------
    async def command(self, session_id: str, args: dict[str, str]) -> str:
        action, text = args.get("action", ""), args.get("text", "")
        if action == "status":
            return str((await self.status(session_id))["text"])
        if action == "why":
            return str((await self.why(session_id, text))["text"])
        if action in ("stop", "resume", "revise"):
            feedback = text if action == "revise" else ""  # "stop" itself is no reason
            done = await self.interrupt(session_id, action, feedback=feedback)  # type: ignore[arg-type]
            if action == "revise":
                return str(done["text"])
            # The Architect's note (its reply, in the transcript) says it in full.
            return f"plan {done['plan_id']}: {'stopped' if action == 'stop' else 'resumed'}"
        raise NothingRunningError(action or "act", "unknown phase action")

    # -- helpers ------------------------------------------------------------------------------
    async def _open_plan(self, session_id: str) -> str | None:
        """The newest plan version awaiting approval (or a draft), if any."""
        plans = await self.desk.plans(session_id)
        latest = {p.plan_id: p for p in plans}  # oldest first: the newest version wins
        waiting = [p for p in latest.values() if p.status in OPEN]
        return waiting[-1].plan_id if waiting else None

    async def _carry_over(self, session_id: str, plan_id: str, old: int, new: int) -> list[str]:
        """The old version's passed records, under the new version's DAG: the scheduler
        trusts one only where the node is planned the same (its digest) and everything
        upstream of it is trusted too; the others run."""
        records = await self.dags.store.load(self.dags.dag_id(session_id, plan_id, old))
        kept = {node for node, record in records.items() if record.status is NodeStatus.PASSED}
        planned = {
            n.get("id")
            for n in (await self.desk.latest(session_id, plan_id)).document.get("nodes", [])
        }
        target = self.dags.dag_id(session_id, plan_id, new)
        for node in sorted(kept & planned):
            await self.dags.store.save(target, node, records[node])
        return sorted(kept & planned)

    async def _stopped_plan(self, session_id: str) -> str | None:
        """The newest plan whose DAG stopped or failed, still approved (not revised)."""
        ended = [d for d in await self.dags.status(session_id) if d.get("status") != "passed"]
        if not ended:
            return None
        plan = await self.desk.latest(session_id, str(ended[-1]["plan_id"]))
        return plan.plan_id if plan.status == PlanStatus.APPROVED else None

    async def _open_lines(self, session_id: str) -> list[str]:
        latest = {p.plan_id: p for p in await self.desk.plans(session_id)}
        return [f"plan {p.plan_id} v{p.version} awaits approval (/plan approve {p.plan_id})"
                for p in latest.values() if p.status in OPEN]  # fmt: skip

    async def _plan_to_revise(self, session_id: str, running: str | None) -> StoredPlan:
        if running is not None:
            return await self.desk.latest(session_id, running)
        plans = await self.desk.plans(session_id)
        latest = [p for p in {p.plan_id: p for p in plans}.values()
                  if p.status in OPEN or p.status == PlanStatus.APPROVED]  # fmt: skip
        if not latest:
            raise NothingRunningError("revise", "no plan runs or waits in this session")
        return latest[-1]

    async def _note(self, session_id: str, text: str, **extra: Any) -> Record:
        return await self.sessions.append(Record(
            session_id=session_id, source=ARCHITECT, target="user", type=MessageType.AGENT_REPLY,
            payload={"text": text, "agent": ARCHITECT, **extra},
        ))  # fmt: skip


def dag_lines(dag: dict[str, Any], *, live: bool) -> list[str]:
    """A DAG as the status shows it: a head line and one line per task."""
    nodes: list[dict[str, Any]] = dag.get("nodes", [])
    head = f"Plan {dag.get('plan_id')}: {'running' if live else dag.get('status')} ({tally(dag)})"
    lines = [head]
    for node in nodes:
        state = str(node.get("status"))
        row = f"  {state:<9} {node.get('id')} ({node.get('agent')})"
        if "running_for_s" in node:
            row += f" running for {float(node['running_for_s']):.0f}s"
        elif node.get("duration_s") is not None and state != "pending":
            row += f" took {float(node['duration_s']):.1f}s"
        if int(node.get("attempts") or 0) > 1:
            row += f", attempt {node['attempts']}"
        if node.get("error"):
            row += f": {str(node['error'])[:120]}"
        lines.append(row)
    return lines


def tally(dag: dict[str, Any] | None) -> str:
    """ "2 of 3 tasks passed, 1 running" from a DAG's summary."""
    nodes: list[dict[str, Any]] = (dag or {}).get("nodes", [])
    counts: dict[str, int] = {}
    for node in nodes:
        counts[str(node.get("status"))] = counts.get(str(node.get("status")), 0) + 1
    passed = counts.pop("passed", 0)
    rest = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    return f"{passed} of {len(nodes)} tasks passed" + (f", {rest}" if rest else "")


def revision_request(plan: StoredPlan, feedback: str, ran: str) -> str:
    return (
        f"The user asks to change plan {plan.plan_id!r} (version {plan.version}).{ran}\n"
        f"Their words: {feedback}\n"
        f"Revise the plan: call architect.plan.modify with plan_id {plan.plan_id!r}, this "
        "feedback and the whole revised plan document; keep the ids of the tasks that stay "
        f"the same. The plan now:\n{_plan_text(plan)}"
    )


def question_request(plan: StoredPlan, question: str) -> str:
    return (
        f"The user asks about plan {plan.plan_id!r} (version {plan.version}), which waits "
        f"for their approval: {question.strip()[:FEEDBACK_MAX]}\nAnswer from the plan below. "
        f"If the answer means the plan should change, say so; do not change it unasked. "
        f"The plan:\n{_plan_text(plan)}"
    )


def plan_rationale(plan: StoredPlan) -> str:
    """What the plan says about itself: its request, each task's reason, the last change."""
    doc = plan.document
    lines = [f"Goal: {doc.get('prompt') or '(not given)'}"]
    order: list[list[str]] = doc.get("execution_order") or []
    if order:
        lines.append(f"{len(order)} level(s), run in order: "
                     + " -> ".join(", ".join(level) for level in order))  # fmt: skip
    for node in doc.get("nodes", []):
        reason = (node.get("context") or {}).get("reason")
        after = ", ".join(node.get("depends_on") or []) or "nothing"
        lines.append(f"- {node['id']} ({node['agent']}, after {after}): {node['prompt']}"
                     + (f" Reason: {reason}" if reason else ""))  # fmt: skip
    if plan.feedback:
        lines.append(f"Last change asked for: {plan.feedback}")
    return "\n".join(lines)


def _plan_text(plan: StoredPlan) -> str:
    return render_plan(plan.document, version=plan.version, status=plan.status)


def install_phase_talk(gateway: Gateway, talk: PhaseTalk) -> None:
    """``architect.status.update`` and ``architect.execution.interrupt``, for real."""

    async def status(ctx: SkillContext, params: StatusParams) -> SkillResult:
        return SkillResult(result=await talk.status(ctx.session_id, params.message))

    async def interrupt(ctx: SkillContext, params: InterruptParams) -> SkillResult:
        done = await talk.interrupt(
            ctx.session_id, params.action, feedback=params.feedback, reason=params.reason or ""
        )
        return SkillResult(result=done)

    install_handler(gateway, "architect.status.update", status)
    install_handler(gateway, "architect.execution.interrupt", interrupt)
