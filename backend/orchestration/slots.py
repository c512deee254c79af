"""One concurrency bound shared by many DAGs, granted round-robin between sessions.

Each DAG keeps its own ``max_concurrency``; :class:`FairSlots` adds a bound across
all of them (how many agents run at once on this machine or against one provider).
A plain semaphore would hand freed slots out in arrival order, so a session whose
DAG has many ready nodes would crowd out one with few; here waiters queue per owner
(a session or DAG) and a freed slot goes to the next owner in turn, so every session
with work progresses at the same pace. A slot is never lost: a waiter cancelled
after it was granted passes the slot on.

:class:`PoolSlots` gives a DAG its slots from the engine's one
:class:`~backend.orchestration.worker_pool.WorkerPool` instead: every session's work
under one bound, each session's limits, engineer nodes counted apart.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from backend.orchestration.worker_pool import Lane, Lease, WorkerPool
from backend.plans import PlanNode

ENGINEER_AGENTS = frozenset({"engineer"})


class Slots(Protocol):
    """A shared bound the scheduler takes a slot from for each attempt of a node (and
    gives it back naming the same owner and node)."""

    async def acquire(self, owner: str, node: PlanNode | None = None) -> None: ...

    def release(self, owner: str | None = None, node: PlanNode | None = None) -> None: ...


class FairSlots:
    """``limit`` slots, handed to waiting owners in turn (round-robin between owners)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("FairSlots needs at least one slot")
        self.limit = limit
        self._free = limit
        self._waiters: dict[str, deque[asyncio.Future[None]]] = {}
        self._turns: deque[str] = deque()  # owners with waiters, next to be served first

    @property
    def in_use(self) -> int:
        return self.limit - self._free

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiters.values())

    async def acquire(self, owner: str, node: PlanNode | None = None) -> None:
        """Wait for a slot for ``owner``; return holding it (give it back with release)."""
        if self._free > 0 and not self._turns:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiters.get(owner)
        if queue is None:
            queue = self._waiters[owner] = deque()
            self._turns.append(owner)
        queue.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted just as it was cancelled: pass the slot on
            else:
                self._forget(owner, future)
            raise

    def release(self, owner: str | None = None, node: PlanNode | None = None) -> None:
        """Give a slot back: to the next owner in turn that waits, else to the pool."""
        while self._turns:
            owner = self._turns.popleft()
            queue = self._waiters[owner]
            future = queue.popleft()
            if queue:
                self._turns.append(owner)
            else:
                del self._waiters[owner]
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

    @asynccontextmanager
    async def hold(self, owner: str) -> AsyncIterator[None]:
        """``async with slots.hold(owner):`` a slot for the block's duration."""
        await self.acquire(owner)
        try:
            yield
        finally:
            self.release()

    def _forget(self, owner: str, future: asyncio.Future[None]) -> None:
        queue = self._waiters.get(owner)
        if queue is None:
            return
        try:
            queue.remove(future)
        except ValueError:
            return
        if not queue:
            del self._waiters[owner]
            self._turns.remove(owner)


class PoolSlots:
    """A DAG's node slots from the worker pool: ``owner`` is the session, each attempt a
    job in ``lane`` (user: the user approved the plan), an engineer node's an engineer job."""

    def __init__(self, pool: WorkerPool, lane: Lane = Lane.USER) -> None:
        self.pool = pool
        self.lane = lane
        self._leases: dict[tuple[str, str], list[Lease]] = {}

    async def acquire(self, owner: str, node: PlanNode | None = None) -> None:
        engineer = node is not None and node.agent in ENGINEER_AGENTS
        lease = await self.pool.acquire(owner, self.lane, engineer=engineer)
        self._leases.setdefault((owner, node.id if node else ""), []).append(lease)

    def release(self, owner: str | None = None, node: PlanNode | None = None) -> None:
        key = (owner or "", node.id if node else "")
        leases = self._leases.get(key)
        if not leases:
            raise RuntimeError(f"no slot is held for {key!r}")
        lease = leases.pop()
        if not leases:
            del self._leases[key]
        lease.release()
