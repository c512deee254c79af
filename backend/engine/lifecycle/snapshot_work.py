"""Snapshot and restore of a session's whole workflow state (the seed's Context Preservation).

A snapshot is the session (context, config, metadata with its ``dags`` record, phase)
plus :class:`~backend.sessions.snapshots.WorkflowState`: each DAG's node records from
the DAG state store, the questions waiting for the user, each agent's loaded ops,
compaction and conversation tail (``snapshot_context``), the Guide's routes of the
session's lines, and the session's undelivered bus messages (``snapshot_messages``).
Restore is refused while the session runs a turn or a DAG; it checks the whole document
before writing anything, puts every node record back (a node that ran since the
snapshot goes back to pending, so it runs again and a node passed at the snapshot is
skipped), brings the session back (``SessionManager.restore``), refills the route cache
and the loaded ops, sends the pending one-way messages again, rewinds every agent's
context to the snapshot's, and says in the transcript what came back and what did not.
A DAG that was running at the snapshot runs again from there: at once when asked
(``resume``), else at the next start.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from backend.archive.snapshot_rows import SnapshotRow, find_snapshot, list_snapshots, load_snapshot
from backend.engine.lifecycle.snapshot_context import capture_agents, rewind_agents
from backend.engine.lifecycle.snapshot_messages import (
    capture_messages,
    checked_messages,
    deliver_again,
)
from backend.guide.routing.decision import Classification, RouteDecision
from backend.messages import MessageType
from backend.orchestration import NodeRecord, NodeStatus
from backend.sessions.models import Session, SessionSnapshot, SessionState
from backend.sessions.snapshots import (
    SNAPSHOT_VERSION,
    TAIL_TEXT_MAX,
    DagSnapshot,
    GuideRoute,
    NodeSnapshot,
    PendingQuestion,
    SessionRunningError,
    SnapshotUnreadableError,
    WorkflowState,
    checked_label,
)

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

TRANSCRIPT_READ = 400  # the last messages read for tails and routes
ROUTES_KEPT = 100
RESUMABLE = (SessionState.ACTIVE, SessionState.SUSPENDED)


async def take_snapshot(parts: EngineParts, ref: str, label: str | None = None) -> SessionSnapshot:
    """Capture the session's workflow state and store it as one versioned document."""
    name = checked_label(label)
    session = parts.sessions.resolve(ref)
    transcript = await parts.sessions.transcript(session.id, limit=TRANSCRIPT_READ)
    workflow = WorkflowState(
        dags=await _dags(parts, session),
        pending_questions=[
            PendingQuestion(id=q.question_id, kind=_question_kind(q.question), text=_asked(q))
            for q in parts.questions.pending(session.id)
        ],
        agents=await capture_agents(parts, session.id, transcript),
        guide_routes=_routes(transcript),
        pending_messages=capture_messages(parts, session.id),
    )
    snapshot = SessionSnapshot(
        session=parts.sessions.get(session.id),
        transcript_count=parts.archive.transcript_counts().get(session.id, 0),
        label=name,
        version=SNAPSHOT_VERSION,
        workflow=workflow,
    )
    await asyncio.to_thread(parts.archive.save_snapshot, snapshot)
    return snapshot


def snapshots_of(parts: EngineParts, ref: str) -> list[SnapshotRow]:
    return list_snapshots(parts.archive, parts.sessions.resolve(ref).id)


def running_work(parts: EngineParts, session_id: str) -> str | None:
    """What of the session runs now (a turn, a DAG), in words; None when nothing does."""
    plan = parts.dags.running(session_id)
    if plan is not None:
        return f"the DAG of plan {plan}"
    return "an agent turn" if parts.dispatcher.running(session_id) else None


async def restore_snapshot(
    parts: EngineParts, ref: str, snapshot_ref: str, *, resume: bool = True
) -> tuple[Session, SessionSnapshot]:
    """Bring the session back to the snapshot; refused (typed) while it runs."""
    session = parts.sessions.resolve(ref)
    row = find_snapshot(parts.archive, session.id, snapshot_ref, session.name)
    snapshot = load_snapshot(parts.archive, row.id)
    running = running_work(parts, session.id)
    if running is not None:
        raise SessionRunningError(session.name, running, "restore")
    workflow = snapshot.workflow or WorkflowState()
    # Checked whole before anything is written; a DAG of another session is refused.
    records = _node_records(snapshot.id, session.id, workflow)
    messages = checked_messages(snapshot.id, session.id, workflow.pending_messages)
    for dag in workflow.dags:
        now = await parts.dags.store.load(dag.dag_id)
        for node_id in now.keys() - records[dag.dag_id].keys():
            digest = now[node_id].digest
            records[dag.dag_id][node_id] = NodeRecord(NodeStatus.PENDING, digest=digest)
        for node_id, record in records[dag.dag_id].items():
            await parts.dags.store.save(dag.dag_id, node_id, record)
    restored = await parts.sessions.restore(snapshot)
    routes = _refill_routes(parts, workflow.guide_routes)
    tracker = parts.gateway.tracker
    if tracker is not None:
        for role, agent in workflow.agents.items():
            for op in agent.loaded_ops:
                tracker.load(session.id, role, op)
    back = await deliver_again(parts, session.id, snapshot.id, messages)
    # A version-1 snapshot kept no agent states: their contexts are left as they are.
    unkept = (
        await rewind_agents(parts, session.id, row, workflow.agents) if snapshot.workflow else []
    )
    live = {q.question_id for q in parts.questions.pending(session.id)}
    text = "\n".join([restored_text(row, workflow, routes, live), *back.lines()])
    if unkept:
        text += f"\nNot kept across a restart (the archive refused): {', '.join(unkept)}'s context."
    await parts.sessions.notice(session.id, text, restored=row.id)
    if resume and restored.state in RESUMABLE:
        for dag in workflow.dags:
            if dag.status == "running":
                await parts.dags.execute(session.id, dag.plan_id)
                break  # one DAG per session
    return parts.sessions.get(session.id), snapshot


def restored_text(
    row: SnapshotRow, workflow: WorkflowState, routes: int, live: set[str] | None = None
) -> str:
    """The restore's notice. A question's future cannot be kept in a snapshot: one still
    asked now stays open; one whose asking flow is gone is named, not asked again here
    (its work asks again if it runs again: a resumed DAG's node, the budget guard)."""
    label = f" ({row.label})" if row.label else ""
    lines = [f"Restored snapshot {row.short_id}{label} taken {row.created_at[:19]}."]
    for dag in workflow.dags:
        counts = ", ".join(
            f"{len(dag.with_status(s))} {s}"
            for s in ("passed", "running", "pending", "failed")
            if dag.with_status(s)
        )
        lines.append(f"Plan {dag.plan_id}: DAG {dag.status}; nodes {counts or 'none'}.")
    for question in workflow.pending_questions:
        if question.id in (live or ()):
            lines.append(f"Still waiting for you: {question.text} (F2)")
        else:
            lines.append(
                f"Was waiting for you: {question.text} (not asked again now: "
                "its work asks again if it runs again)"
            )
    loaded = sum(len(a.loaded_ops) for a in workflow.agents.values())
    lines.append(f"{routes} Guide route(s) and {loaded} loaded op(s) back.")
    return "\n".join(lines)


# -- capture -----------------------------------------------------------------------------
async def _dags(parts: EngineParts, session: Session) -> list[DagSnapshot]:
    found: list[DagSnapshot] = []
    entries = session.metadata.get("dags") or {}
    for plan_id, entry in entries.items() if isinstance(entries, dict) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("dag_id"), str):
            continue
        records = await parts.dags.store.load(entry["dag_id"])
        nodes = {n: NodeSnapshot(**r._asdict()) for n, r in records.items()}
        status = str(entry.get("status", "unknown"))
        found.append(DagSnapshot(plan_id=plan_id, dag_id=entry["dag_id"], status=status,
                                 nodes=nodes))  # fmt: skip
    return found


def _question_kind(question: Any) -> str:
    if question.plan is not None:
        return "plan_review"
    return "approval" if question.approval is not None else "choice"


def _asked(asked: Any) -> str:
    question = asked.question
    return " ".join(f"{question.title}: {question.prompt}".split())[:TAIL_TEXT_MAX]


def _routes(transcript: list[Any]) -> list[GuideRoute]:
    routes: dict[str, GuideRoute] = {}
    for message in transcript:
        route = message.payload.get("route")
        text = message.payload.get("text")
        if message.type != MessageType.USER_INPUT or not isinstance(route, dict):
            continue
        if route.get("tier") in ("dsl", None) or not isinstance(text, str):
            continue  # a command is parsed, never cached
        routes.pop(text, None)
        routes[text] = GuideRoute(text=text, decision=route)
    return list(routes.values())[-ROUTES_KEPT:]


# -- restore -----------------------------------------------------------------------------
def _node_records(
    snapshot_id: str, session_id: str, workflow: WorkflowState
) -> dict[str, dict[str, NodeRecord]]:
    records: dict[str, dict[str, NodeRecord]] = {}
    for dag in workflow.dags:
        if not dag.dag_id.startswith(f"{session_id}/{dag.plan_id}/"):
            raise SnapshotUnreadableError(snapshot_id, f"DAG {dag.dag_id!r} is not this session's")
        try:
            records[dag.dag_id] = {
                n: NodeRecord(
                    NodeStatus(r.status), r.attempts, r.output, r.error, r.duration_s, r.digest
                )
                for n, r in dag.nodes.items()
            }
        except ValueError as exc:
            raise SnapshotUnreadableError(snapshot_id, f"plan {dag.plan_id}: {exc}") from None
    return records


def _refill_routes(parts: EngineParts, routes: list[GuideRoute]) -> int:
    cache = parts.guide.router.cache
    kept = 0
    for route in routes:
        try:
            decision = RouteDecision.model_validate(route.decision)
        except ValidationError:
            continue  # a route this version cannot read: the Guide simply routes it again
        fields = decision.model_dump(include=set(Classification.model_fields))
        kept += cache.put(route.text, Classification(**fields))
    return kept
