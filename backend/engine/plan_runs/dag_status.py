"""What a session's DAGs are, as the user reads them: the record and each node's state.

:class:`~backend.engine.plan_runs.dag_work.DagWork` runs DAGs; this module keeps what
outlives a run. Which DAGs a session has (plan id -> version, dag id, status, times)
lives in the session's metadata under ``dags``, so it is archived, snapshotted and read
back after a restart; each node's state comes from the live scheduler while the DAG runs
in this process, else from the node records in the state file. Kept apart from the
running so ``orchestrator.dag.status`` reads the same thing whether a run is live or not.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from backend.clock import utc_now
from backend.engine.plan_runs.dag_nodes import DagNotFoundError
from backend.engine.session_service import SessionService
from backend.orchestration import (
    DagOutcome,
    DagScheduler,
    NodeRecord,
    NodeStatus,
    SqliteDagStateStore,
)
from backend.plans.desk import PlanDesk
from backend.sessions.models import Session

METADATA_KEY = "dags"
RUNNING = "running"


@dataclass
class DagRun:
    """One DAG running in this process."""

    session_id: str
    plan_id: str
    version: int
    scheduler: DagScheduler
    agents: dict[str, str]
    started: dict[str, float] = field(default_factory=dict)  # node -> monotonic start
    notes: asyncio.Queue[tuple[str, dict[str, Any]] | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[DagOutcome | None] | None = None

    @property
    def dag_id(self) -> str:
        return self.scheduler.dag_id


class DagBook:
    """The session's DAG entries (its metadata) and their nodes' state, live or stored."""

    def __init__(self, sessions: SessionService, desk: PlanDesk, store: SqliteDagStateStore):
        self._sessions = sessions
        self._desk = desk
        self._store = store

    def entries(self, session_id: str) -> dict[str, dict[str, Any]]:
        """Plan id -> its DAG entry (only well-formed ones: a hand-edited value is skipped)."""
        return _entries_of(self._sessions.get(session_id))

    @staticmethod
    def running_plans(session: Session) -> list[str]:
        """The session's plans whose DAG was running when it was last written down."""
        dags = session.metadata.get(METADATA_KEY) or {}
        return [p for p, e in dags.items() if isinstance(e, dict) and e.get("status") == RUNNING]

    async def remember(self, session_id: str, plan_id: str, **entry: Any) -> None:
        """Update the plan's entry; ``dag_id`` in ``entry`` starts a new one."""
        dags = dict(self._sessions.get(session_id).metadata.get(METADATA_KEY) or {})
        old = dags.get(plan_id)
        before: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
        if "dag_id" in entry:  # a new run
            before = {"started_at": now_iso()}
        dags[plan_id] = {**before, **entry}
        await self._sessions.set_metadata(session_id, METADATA_KEY, dags)

    async def status(
        self, session_id: str, plan_id: str | None, live: DagRun | None
    ) -> list[dict[str, Any]]:
        """Each DAG of the session (or the one of ``plan_id``): its nodes' state."""
        entries = self.entries(session_id)
        if plan_id is not None:
            if plan_id not in entries:
                raise DagNotFoundError(f"plan {plan_id!r}")
            entries = {plan_id: entries[plan_id]}
        return [await self.summary(session_id, p, live) for p in entries]

    async def summary(self, session_id: str, plan_id: str, live: DagRun | None) -> dict[str, Any]:
        """The plan's entry with a row per node; ``live`` is the session's running DAG."""
        entry = self.entries(session_id)[plan_id]
        if live is not None and live.plan_id != plan_id:
            live = None
        records: dict[str, NodeRecord] = (
            dict(live.scheduler.records) if live else await self._store.load(entry["dag_id"])
        )
        plan = await self._desk.latest(session_id, plan_id)
        nodes = []
        now = time.monotonic()
        for node in plan.document.get("nodes", []):
            record = records.get(node["id"])
            row: dict[str, Any] = {"id": node["id"], "agent": node.get("agent"),
                                   "status": record.status.value if record else "pending",
                                   "attempts": record.attempts if record else 0,
                                   "duration_s": record.duration_s if record else None}  # fmt: skip
            if record is not None and record.error:
                row["error"] = record.error
            if live and record is not None and record.status is NodeStatus.RUNNING:
                row["running_for_s"] = round(now - live.started.get(node["id"], now), 3)
            nodes.append(row)
        return {"plan_id": plan_id, **entry, "status": entry.get("status"), "nodes": nodes}


def _entries_of(session: Session) -> dict[str, dict[str, Any]]:
    dags = session.metadata.get(METADATA_KEY) or {}
    return {k: v for k, v in dags.items() if isinstance(v, dict) and "dag_id" in v}


def now_iso() -> str:
    return utc_now().isoformat()
