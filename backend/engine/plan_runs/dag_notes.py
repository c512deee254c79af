"""The transcript's short notices of a running DAG: one per node transition, one at the end.

The events (:class:`~backend.events.DagStatusChanged`) carry everything; these lines
are what a person reads in the transcript, each with the plan, node and status as
fields a front end can style.
"""

from __future__ import annotations

from typing import Any

from backend.orchestration import DagOutcome, DagStatus, NodeEvent, NodeStatus

Note = tuple[str, dict[str, Any]]
ERROR_MAX = 200


def _short(error: str | None) -> str:
    text = (error or "").strip().replace("\n", " ")
    return text if len(text) <= ERROR_MAX else text[: ERROR_MAX - 1] + "…"


def _seconds(value: float | None) -> str:
    return f" in {value:.1f} s" if value is not None else ""


def node_note(plan_id: str, agent: str, event: NodeEvent) -> Note | None:
    """The notice of one node transition; None for PENDING (every node starts so)."""
    who = f"{event.node_id} ({agent})"
    tries = f"attempt {event.attempt}/{event.max_attempts}"
    status = event.status
    if status is NodeStatus.PENDING:
        return None
    if status is NodeStatus.RUNNING:
        text = f"▶ {who} started, {tries}"
    elif status is NodeStatus.PASSED and event.resumed:
        text = f"✓ {who} passed before the restart: not run again"
    elif status is NodeStatus.PASSED:
        text = f"✓ {who} passed{_seconds(event.duration_s)}"
    elif status is NodeStatus.RETRYING:
        wait = f"; retrying in {event.delay_s:g} s" if event.delay_s is not None else ""
        text = f"↻ {who} {tries} failed: {_short(event.error)}{wait}"
    elif status is NodeStatus.FAILED:
        text = f"✗ {who} failed after {event.attempt} attempt(s): {_short(event.error)}"
    elif status is NodeStatus.SKIPPED:
        text = f"– {who} skipped: {_short(event.error)}"
    else:
        text = f"■ {who} cancelled"
    extra = {"dag": plan_id, "node": event.node_id, "status": status.value}
    return f"Plan {plan_id}: {text}", extra


def dag_end_note(
    plan_id: str, status: DagStatus, outcome: DagOutcome | None, error: str | None
) -> Note:
    """The notice of the DAG's end: how it ended and which nodes did what."""
    extra: dict[str, Any] = {"dag": plan_id, "status": status.value}
    if outcome is None:
        return f"Plan {plan_id}: the DAG stopped: {_short(error)}", {**extra, "error": "DagError"}
    counts = []
    for node_status in NodeStatus:
        ids = outcome.with_status(node_status)
        if ids:
            counts.append(f"{len(ids)} {node_status.value}")
    tally = ", ".join(counts) or "no tasks"
    if status is DagStatus.PASSED:
        return f"Plan {plan_id}: every task passed ({tally}); next: inspection", extra
    if status is DagStatus.CANCELLED:
        return f"Plan {plan_id}: cancelled ({tally}); back to planning", extra
    failed = ", ".join(outcome.with_status(NodeStatus.FAILED)) or "?"
    return f"Plan {plan_id}: failed at {failed} ({tally}); back to planning", extra
