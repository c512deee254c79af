"""The engine's one worker pool, wired in: who takes a worker, in which lane.

Workers are taken only where work enters (never again inside it, so a job never waits
for a second worker while holding one): a user's request for an agent in
``Engine.submit`` (lane user; an ``@engineer`` request is an engineer job), each attempt
of a node of an approved plan (``PoolSlots``, lane user; engineer nodes are engineer
jobs), and the session QA's inspection and test runs (lane background,
:class:`PooledQaChecks`). Each session's limits are its ``SessionConfig``'s
``max_concurrent_tasks`` and ``max_engineers``, read when a job asks, set with
``/session limits`` (:func:`limits_command`).

A user's request that has to queue says so once ("waiting for a worker (8/8 busy; 2
ahead)") when it has waited ``notice_after_s``; one granted at once says nothing.
The code index takes background workers through :func:`index_gate`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from backend.config.scheduling import SchedulingSettings
from backend.errors import CommandError, SylkError
from backend.orchestration import Lane, Lease, SessionLimits, WorkerPool
from backend.orchestration.slots import ENGINEER_AGENTS
from backend.orchestration.worker_pool import LimitsOf
from backend.pipelines.checks import InspectionReport, TestReport
from backend.sessions.models import Session
from backend.team.qa_checks import QaChecks

if TYPE_CHECKING:
    from backend.engine.parts import EngineParts
    from backend.knowledge.code.live import IndexGate


NOTICE_AFTER_S = 0.5  # a shorter wait is not worth a line in the transcript
INDEX_OWNER = "~index"  # the code index's jobs in the pool (no session is named so)
LIMITS_USAGE = "/session limits [tasks N] [engineers N]"
LIMIT_MAX = 1024


class SessionLookup(Protocol):
    def get(self, session_id: str) -> Session: ...

    async def notice(self, session_id: str, text: str, **extra: Any) -> object: ...


Notice = Callable[[str, str], Awaitable[object]]


class EngineWorkers(WorkerPool):
    """The engine's pool: a :class:`WorkerPool` that can tell a waiting user (``notice``
    after ``notice_after_s``; tests set it to 0 rather than wait)."""

    def __init__(
        self,
        max_workers: int,
        *,
        limits: LimitsOf | None = None,
        age_after: int = 8,
        notice: Notice | None = None,
        notice_after_s: float = NOTICE_AFTER_S,
    ) -> None:
        super().__init__(max_workers, limits=limits, age_after=age_after)
        self.notice = notice
        self.notice_after_s = notice_after_s


def session_limits(sessions: SessionLookup) -> LimitsOf:
    """A session's limits from its ``SessionConfig`` (defaults for one not found)."""

    def limits(session_id: str) -> SessionLimits:
        if session_id.startswith("~"):  # the pool's own owners (INDEX_OWNER): no session
            return SessionLimits()
        try:
            config = sessions.get(session_id).config
        except SylkError:
            return SessionLimits()
        return SessionLimits(config.max_concurrent_tasks, config.max_engineers)

    return limits


def build_worker_pool(settings: SchedulingSettings, sessions: SessionLookup) -> EngineWorkers:
    """The engine's pool: ``[scheduling]``'s bound, each session's own limits, a waiting
    user's notice in the session's transcript."""
    return EngineWorkers(
        settings.max_workers,
        limits=session_limits(sessions),
        age_after=settings.age_after,
        notice=sessions.notice,
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


def index_gate(pool: WorkerPool) -> IndexGate:
    """The code index's builds and batch updates as background jobs of the pool (one
    owner, ``INDEX_OWNER``, for every workspace). A build a request awaits (``skip`` set)
    stops waiting and runs without a worker: the request may hold the last one."""

    async def take(skip: asyncio.Event) -> Callable[[], None]:
        taking = asyncio.ensure_future(pool.acquire(INDEX_OWNER, Lane.BACKGROUND))
        skipped = asyncio.ensure_future(skip.wait())
        try:
            await asyncio.wait({taking, skipped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            taking.cancel()  # still queued: the pool takes it out (or passes its grant on)
            taking.add_done_callback(_give_back)  # granted already: given back
            raise
        finally:
            skipped.cancel()
        if not taking.done():  # skipped: the build runs without a worker
            taking.cancel()
            return _nothing
        if taking.cancelled() or taking.exception() is not None:
            return _nothing
        return taking.result().release

    return take


def _nothing() -> None:
    return None


def _give_back(taking: asyncio.Future[Lease]) -> None:
    if not taking.cancelled() and taking.exception() is None:
        taking.result().release()


def wait_line(pool: WorkerPool, session_id: str) -> str:
    """``waiting for a worker (8/8 busy; 2 ahead)``, or the session's own limit when that
    is what holds the job back."""
    use = pool.session_use(session_id)
    if use.running >= use.limits.max_tasks:
        why = f"this session runs {use.running}/{use.limits.max_tasks} tasks"
    else:
        why = f"{pool.busy}/{pool.max_workers} busy"
    return f"waiting for a worker ({why}; {pool.ahead(session_id)} ahead)"


@asynccontextmanager
async def user_job(pool: WorkerPool, session_id: str, target: str) -> AsyncIterator[Lease]:
    """A user's request for an agent as a user job (for the Engineer: an engineer job);
    one that waits longer than the pool's ``notice_after_s`` says so once."""
    engineer = target in ENGINEER_AGENTS
    lease = pool.try_acquire(session_id, Lane.USER, engineer=engineer)
    if lease is None:
        lease = await _queued(pool, session_id, engineer)
    try:
        yield lease
    finally:
        lease.release()


async def _queued(pool: WorkerPool, session_id: str, engineer: bool) -> Lease:
    notice = pool.notice if isinstance(pool, EngineWorkers) else None
    if notice is None:
        return await pool.acquire(session_id, Lane.USER, engineer=engineer)
    assert isinstance(pool, EngineWorkers)
    taking = asyncio.ensure_future(pool.acquire(session_id, Lane.USER, engineer=engineer))
    try:
        done, _ = await asyncio.wait({taking}, timeout=pool.notice_after_s)
        if not done:
            await notice(session_id, wait_line(pool, session_id))
        return await taking
    except BaseException:
        if not taking.done():
            taking.cancel()  # the pool takes a cancelled waiter out (or passes its grant on)
        elif not taking.cancelled() and taking.exception() is None:
            taking.result().release()  # granted while the notice was written
        raise


def parse_limits(text: str) -> dict[str, int]:
    """``tasks N engineers N`` (either, any order) as SessionConfig fields; a
    :class:`CommandError` naming the usage for anything else."""
    words, fields = text.split(), {"tasks": "max_concurrent_tasks", "engineers": "max_engineers"}
    if len(words) % 2:
        raise CommandError(f"cannot read limits {text!r}", help_hint=LIMITS_USAGE)
    found: dict[str, int] = {}
    for name, value in zip(words[::2], words[1::2], strict=True):
        field_name = fields.get(name.lower())
        if field_name is None:
            raise CommandError(f"no limit is called {name!r}", help_hint=LIMITS_USAGE)
        if not value.isdecimal() or not 1 <= int(value) <= LIMIT_MAX:
            raise CommandError(
                f"{name} takes a whole number from 1 to {LIMIT_MAX}, not {value!r}",
                help_hint=LIMITS_USAGE,
            )
        found[field_name] = int(value)
    return found


class LimitedSessions(SessionLookup, Protocol):
    async def set_config(self, ref: str, config: Any) -> Session: ...


async def limits_command(
    sessions: LimitedSessions, pool: WorkerPool, session_id: str, text: str | None
) -> str:
    """``/session limits``: show this session's limits and use; ``tasks N engineers N``
    sets them first, kept in its ``SessionConfig`` (in the archive, across restarts)."""
    change = parse_limits(text or "")
    if change:
        config = sessions.get(session_id).config.model_copy(update=change)
        await sessions.set_config(session_id, config)
    said = "limits set; " if change else ""
    return said + "; ".join(worker_lines(pool, session_id)) + f" (set with {LIMITS_USAGE})"


class _HasParts(Protocol):
    _parts: EngineParts


async def limits_verb(engine: _HasParts, session_id: str, text: str | None) -> str:
    """``Engine.limits_command``: :func:`limits_command` on the engine's parts."""
    parts = engine._parts
    return await limits_command(parts.sessions, parts.workers, session_id, text)
