"""The engine's one worker pool, wired in: who takes a worker, in which lane.

Workers are taken only where work enters (never again inside it, so a job never waits
for a second worker while holding one): a user's request for an agent in
``Engine.submit`` (lane user; an ``@engineer`` request is an engineer job), each attempt
of a node of an approved plan (``PoolSlots``, lane user; engineer nodes are engineer
jobs), and the session QA's inspection and test runs (lane background,
:class:`PooledQaChecks`). Each session's limits are its ``SessionConfig``'s
``max_concurrent_tasks`` and ``max_engineers``, read when a job asks.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.config.scheduling import SchedulingSettings
from backend.errors import SylkError
from backend.orchestration import Lane, Lease, SessionLimits, WorkerPool
from backend.orchestration.slots import ENGINEER_AGENTS
from backend.orchestration.worker_pool import LimitsOf
from backend.pipelines.checks import InspectionReport, TestReport
from backend.sessions.models import Session
from backend.team.qa_checks import QaChecks


class SessionLookup(Protocol):
    def get(self, session_id: str) -> Session: ...


def session_limits(sessions: SessionLookup) -> LimitsOf:
    """A session's limits from its ``SessionConfig`` (defaults for one not found)."""

    def limits(session_id: str) -> SessionLimits:
        try:
            config = sessions.get(session_id).config
        except SylkError:
            return SessionLimits()
        return SessionLimits(config.max_concurrent_tasks, config.max_engineers)

    return limits


def build_worker_pool(settings: SchedulingSettings, sessions: SessionLookup) -> WorkerPool:
    """The engine's pool: ``[scheduling]``'s bound, each session's own limits."""
    return WorkerPool(
        settings.max_workers, limits=session_limits(sessions), age_after=settings.age_after
    )


@dataclass(frozen=True)
class PooledQaChecks(QaChecks):
    """Session QA's tool runs, each as a background job of the session in the pool."""

    workers: WorkerPool | None = None

    async def inspect(self, session_id: str, workspace: Path, files: list[str]) -> InspectionReport:
        if self.workers is None:
            return await super().inspect(session_id, workspace, files)
        async with self.workers.hold(session_id, Lane.BACKGROUND):
            return await super().inspect(session_id, workspace, files)

    async def test(self, session_id: str, workspace: Path) -> TestReport:
        if self.workers is None:
            return await super().test(session_id, workspace)
        async with self.workers.hold(session_id, Lane.BACKGROUND):
            return await super().test(session_id, workspace)


def worker_lines(pool: WorkerPool, session_id: str) -> list[str]:
    """``/status``'s lines: the whole pool, then this session's use against its limits."""
    snapshot = pool.snapshot()
    if session_id not in snapshot.sessions:
        snapshot.sessions[session_id] = pool.session_use(session_id)
    return [snapshot.line(), snapshot.session_line(session_id)]


def worker_block(pool: WorkerPool, session_id: str) -> str:
    """The block ``/status`` ends with: ``Workers: workers 3/8 busy, ...``."""
    return "\n\nWorkers:\n" + "\n".join(f"  {line}" for line in worker_lines(pool, session_id))


def user_job(pool: WorkerPool, session_id: str, target: str) -> AbstractAsyncContextManager[Lease]:
    """A user's request for an agent as a user job (for the Engineer: an engineer job)."""
    return pool.hold(session_id, Lane.USER, engineer=target in ENGINEER_AGENTS)
