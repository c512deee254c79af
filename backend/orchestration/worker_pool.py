"""One pool of workers for every session: a bound on all work, fair and in two lanes.

Why one pool. Each session may run a DAG, a user's request and background work (session
QA) at once; fifty sessions doing so would start hundreds of agents. The pool bounds
them all (``max_workers``), and within that:

* **Per-session limits** from the session's ``SessionConfig``: ``max_concurrent_tasks``
  counts everything the session holds, ``max_engineers`` its engineer jobs (engineer
  nodes and ``@engineer`` pipelines). A job its session may not start yet does not block
  another session's job, nor a later one of its own that is allowed.
* **Fairness**: within a lane, a freed worker goes to the next session in turn that has a
  waiting job (round-robin), so a session with many ready jobs cannot crowd one with few.
* **Lanes**: ``user`` (what the user asked for: agent requests, nodes of a plan the user
  approved) goes before ``background`` (session QA, indexing). A background job never
  takes the last free worker while user work waits. To keep background work from
  starving, a background job that ``age_after`` user grants have overtaken goes first.
* **No slot is lost**: a waiter cancelled before its grant leaves the queue; one cancelled
  just as it was granted hands the worker straight back; releasing a lease twice frees
  one worker, once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum


class Lane(StrEnum):
    USER = "user"
    BACKGROUND = "background"


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How much of the pool one session may hold (its ``SessionConfig``)."""

    max_tasks: int = 4
    max_engineers: int = 4


LimitsOf = Callable[[str], SessionLimits]


class Lease:
    """One worker held for a job; ``release`` gives it back (once, however often called)."""

    __slots__ = ("_pool", "engineer", "lane", "released", "session_id")

    def __init__(self, pool: WorkerPool, session_id: str, lane: Lane, engineer: bool) -> None:
        self._pool = pool
        self.session_id = session_id
        self.lane = lane
        self.engineer = engineer
        self.released = False

    def release(self) -> None:
        self._pool.release(self)


@dataclass(eq=False, slots=True)
class _Waiter:
    session_id: str
    lane: Lane
    engineer: bool
    future: asyncio.Future[Lease]
    mark: int  # user grants so far when it queued (a background job's age)
    seq: int  # its place in the order jobs queued (``ahead``)
    gone: bool = False  # granted or withdrawn: skipped where it is still listed


@dataclass(slots=True)
class SessionUse:
    """One session's share of the pool right now, against its limits."""

    running: int = 0
    engineers: int = 0
    waiting: int = 0
    limits: SessionLimits = field(default_factory=SessionLimits)


@dataclass(frozen=True, slots=True)
class PoolSnapshot:
    max_workers: int
    busy: int
    waiting_user: int
    waiting_background: int
    sessions: dict[str, SessionUse]

    def line(self) -> str:
        """``workers 3/8 busy, 2 waiting (1 user, 1 background)``"""
        waiting = self.waiting_user + self.waiting_background
        text = f"workers {self.busy}/{self.max_workers} busy"
        if waiting:
            text += (
                f", {waiting} waiting ({self.waiting_user} user, "
                f"{self.waiting_background} background)"
            )
        return text

    def session_line(self, session_id: str) -> str:
        """``this session: 2/4 tasks, 1/2 engineers, 1 waiting``"""
        use = self.sessions.get(session_id) or SessionUse()
        limits = use.limits
        text = (
            f"this session: {use.running}/{limits.max_tasks} tasks, "
            f"{use.engineers}/{limits.max_engineers} engineers"
        )
        return text + (f", {use.waiting} waiting" if use.waiting else "")


class WorkerPool:
    """``max_workers`` workers shared by every session; see the module's docstring."""

    def __init__(
        self,
        max_workers: int,
        *,
        limits: LimitsOf | None = None,
        age_after: int = 8,
    ) -> None:
        if max_workers < 1:
            raise ValueError("a worker pool needs at least one worker")
        if age_after < 1:
            raise ValueError("age_after must be at least 1")
        self.max_workers = max_workers
        self.age_after = age_after
        self._limits_of = limits or (lambda _sid: SessionLimits())
        self._busy = 0
        self._running: dict[str, int] = {}
        self._engineers: dict[str, int] = {}
        self._limits: dict[str, SessionLimits] = {}
        self._queues: dict[Lane, dict[str, deque[_Waiter]]] = {lane: {} for lane in Lane}
        self._turns: dict[Lane, deque[str]] = {lane: deque() for lane in Lane}
        self._count = dict.fromkeys(Lane, 0)  # waiters per lane
        self._aging: deque[_Waiter] = deque()  # background waiters, oldest first
        self._user_grants = 0
        self._queued = 0  # jobs ever queued: each waiter's ``seq``

    # -- reading ---------------------------------------------------------------------
    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return self._count[Lane.USER] + self._count[Lane.BACKGROUND]

    def snapshot(self) -> PoolSnapshot:
        """What ``/status`` shows: the whole pool, and each session's use and limits."""
        sessions: dict[str, SessionUse] = {}
        for sid, running in self._running.items():
            sessions[sid] = SessionUse(running, self._engineers.get(sid, 0))
        for queues in self._queues.values():
            for sid, queue in queues.items():
                sessions.setdefault(sid, SessionUse()).waiting += len(queue)
        for sid, use in sessions.items():
            use.limits = self._limits.get(sid) or self._limits_of(sid)
        return PoolSnapshot(
            self.max_workers,
            self._busy,
            self._count[Lane.USER],
            self._count[Lane.BACKGROUND],
            sessions,
        )

    def ahead(self, session_id: str, lane: Lane = Lane.USER) -> int:
        """How many jobs of ``lane`` queued before the newest waiting job of ``session_id``
        still wait (what "2 ahead" says; round-robin may serve it sooner)."""
        queue = self._queues[lane].get(session_id)
        if not queue:
            return 0
        seq = queue[-1].seq
        return sum(1 for queued in self._queues[lane].values() for w in queued if w.seq < seq)

    def session_use(self, session_id: str) -> SessionUse:
        return self.snapshot().sessions.get(session_id) or SessionUse(
            limits=self._limits_of(session_id)
        )

    # -- taking and giving back ------------------------------------------------------
    async def acquire(
        self, session_id: str, lane: Lane = Lane.USER, *, engineer: bool = False
    ) -> Lease:
        """Wait for a worker for one job of ``session_id``; return holding it."""
        self._limits[session_id] = self._limits_of(session_id)
        if self._free_for(session_id, engineer):
            return self._grant_now(session_id, lane, engineer)
        loop = asyncio.get_running_loop()
        self._queued += 1
        waiter = _Waiter(
            session_id, lane, engineer, loop.create_future(), self._user_grants, self._queued
        )
        self._enqueue(waiter)
        self._pump()
        try:
            return await waiter.future
        except asyncio.CancelledError:
            future = waiter.future
            if future.done() and not future.cancelled():
                self.release(future.result())  # granted as it was cancelled: passed on
            else:
                self._withdraw(waiter)
            raise

    def try_acquire(
        self, session_id: str, lane: Lane = Lane.USER, *, engineer: bool = False
    ) -> Lease | None:
        """A worker at once if one is free, nobody waits and the session may start the
        job; else None (nothing queued)."""
        self._limits[session_id] = self._limits_of(session_id)
        if self._free_for(session_id, engineer):
            return self._grant_now(session_id, lane, engineer)
        self._drop_limits_if_idle(session_id)
        return None

    def release(self, lease: Lease) -> None:
        """Give a worker back; the next job in line (if any) gets it."""
        if lease.released:
            return
        lease.released = True
        sid = lease.session_id
        self._busy -= 1
        left = self._running[sid] - 1
        if left:
            self._running[sid] = left
        else:
            del self._running[sid]
            self._drop_limits_if_idle(sid)
        if lease.engineer:
            engineers = self._engineers[sid] - 1
            if engineers:
                self._engineers[sid] = engineers
            else:
                del self._engineers[sid]
        if self.waiting:
            self._pump()

    @asynccontextmanager
    async def hold(
        self, session_id: str, lane: Lane = Lane.USER, *, engineer: bool = False
    ) -> AsyncIterator[Lease]:
        """``async with pool.hold(sid, lane):`` a worker for the block's duration."""
        lease = await self.acquire(session_id, lane, engineer=engineer)
        try:
            yield lease
        finally:
            self.release(lease)

    # -- inside ----------------------------------------------------------------------
    def _fits(self, sid: str, engineer: bool) -> bool:
        limits = self._limits.get(sid) or self._limits_of(sid)
        if self._running.get(sid, 0) >= limits.max_tasks:
            return False
        return not engineer or self._engineers.get(sid, 0) < limits.max_engineers

    def _free_for(self, sid: str, engineer: bool) -> bool:
        """May this job start now without queueing (a free worker, nobody waiting)?"""
        return not self.waiting and self._busy < self.max_workers and self._fits(sid, engineer)

    def _grant_now(self, sid: str, lane: Lane, engineer: bool) -> Lease:
        self._busy += 1
        self._running[sid] = self._running.get(sid, 0) + 1
        if engineer:
            self._engineers[sid] = self._engineers.get(sid, 0) + 1
        if lane is Lane.USER:
            self._user_grants += 1
        return Lease(self, sid, lane, engineer)

    def _enqueue(self, waiter: _Waiter) -> None:
        queues = self._queues[waiter.lane]
        queue = queues.get(waiter.session_id)
        if queue is None:
            queue = queues[waiter.session_id] = deque()
            self._turns[waiter.lane].append(waiter.session_id)
        queue.append(waiter)
        self._count[waiter.lane] += 1
        if waiter.lane is Lane.BACKGROUND:
            self._aging.append(waiter)

    def _withdraw(self, waiter: _Waiter) -> None:
        """A waiter cancelled before its grant leaves its queue."""
        if waiter.gone:
            return
        waiter.gone = True
        self._take(waiter)  # out of its queue, as a granted one leaves it
        self._drop_limits_if_idle(waiter.session_id)
        # Its place may have held back a job behind it (a lane's reserve): look again.
        self._pump()

    def _drop_limits_if_idle(self, sid: str) -> None:
        if not self._running.get(sid) and not self._has_waiters(sid):
            self._limits.pop(sid, None)

    def _has_waiters(self, sid: str) -> bool:
        return any(sid in queues for queues in self._queues.values())

    def _pump(self) -> None:
        """Hand free workers to waiting jobs, in order, while any may start."""
        while self._busy < self.max_workers and self.waiting:
            waiter = self._pick()
            if waiter is None:
                return
            waiter.gone = True
            if waiter.future.done():  # cancelled, its task not told yet: it is withdrawn
                self._drop_limits_if_idle(waiter.session_id)
                continue
            lease = self._grant_now(waiter.session_id, waiter.lane, waiter.engineer)
            waiter.future.set_result(lease)

    def _pick(self) -> _Waiter | None:
        aged = self._oldest_aged()
        if aged is not None:
            self._take(aged)
            return aged
        waiter = self._next_in(Lane.USER)
        if waiter is not None:
            return waiter
        free = self.max_workers - self._busy
        if free >= 2 or not self._count[Lane.USER]:  # the last worker is kept for the user
            return self._next_in(Lane.BACKGROUND)
        return None

    def _oldest_aged(self) -> _Waiter | None:
        """The oldest background job, if user jobs overtook it ``age_after`` times and its
        session may start it."""
        aging = self._aging
        while aging and aging[0].gone:
            aging.popleft()
        if not aging:
            return None
        oldest = aging[0]
        if self._user_grants - oldest.mark < self.age_after:
            return None
        return oldest if self._fits(oldest.session_id, oldest.engineer) else None

    def _next_in(self, lane: Lane) -> _Waiter | None:
        """The next session in turn with a job it may start now: its first such job."""
        turns, queues = self._turns[lane], self._queues[lane]
        for _ in range(len(turns)):
            sid = turns[0]
            turns.rotate(-1)  # served or not, it goes to the back of the turn
            if self._running.get(sid, 0) >= (self._limits.get(sid) or SessionLimits()).max_tasks:
                continue
            for waiter in queues[sid]:
                if self._fits(sid, waiter.engineer):
                    self._take(waiter)
                    return waiter
        return None

    def _take(self, waiter: _Waiter) -> None:
        """Out of its queue (it is being granted, or withdrawn)."""
        queues = self._queues[waiter.lane]
        queue = queues[waiter.session_id]
        queue.remove(waiter)
        self._count[waiter.lane] -= 1
        if not queue:
            del queues[waiter.session_id]
            self._turns[waiter.lane].remove(waiter.session_id)
