"""Orchestration: the scheduler that runs a plan's DAG, and where its progress is kept.

``scheduler.DagScheduler`` runs a validated plan with a ``run_node`` callable (no
agents here: the engine supplies the callable that runs a node as an agent request or
a pipeline); ``node_attempt`` is one attempt under a time limit; ``slots.FairSlots``
a concurrency bound shared by many DAGs, fair between sessions, and ``slots.PoolSlots``
a DAG's slots from ``worker_pool.WorkerPool``, the one pool of workers for every
session's work (per-session limits, user before background); ``records`` the
results, records, events and outcome; ``state_store`` the persistence protocol and its
in-memory store, ``sqlite_state_store`` the one on a SQLite file that a run resumes
from after a kill.
"""

from backend.orchestration.node_attempt import RunNode
from backend.orchestration.records import (
    DagOutcome,
    DagStatus,
    NodeEvent,
    NodeRecord,
    NodeResult,
    NodeStatus,
)
from backend.orchestration.scheduler import DagScheduler
from backend.orchestration.slots import FairSlots, PoolSlots, Slots
from backend.orchestration.sqlite_state_store import SqliteDagStateStore
from backend.orchestration.state_store import (
    DagStateError,
    DagStateStore,
    MemoryDagStateStore,
    OutputNotStorableError,
)
from backend.orchestration.worker_pool import (
    Lane,
    Lease,
    PoolSnapshot,
    SessionLimits,
    SessionUse,
    WorkerPool,
)

__all__ = [
    "DagOutcome",
    "DagScheduler",
    "DagStateError",
    "DagStateStore",
    "DagStatus",
    "FairSlots",
    "Lane",
    "Lease",
    "MemoryDagStateStore",
    "NodeEvent",
    "NodeRecord",
    "NodeResult",
    "NodeStatus",
    "OutputNotStorableError",
    "PoolSlots",
    "PoolSnapshot",
    "RunNode",
    "SessionLimits",
    "SessionUse",
    "Slots",
    "SqliteDagStateStore",
    "WorkerPool",
]
