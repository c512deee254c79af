"""A bounded priority inbox: one per (session, agent).

Higher :class:`~backend.messages.Priority` first, FIFO within a priority (a heap keyed
by ``(-priority, sequence)``). A sender that finds the inbox full waits for a slot up
to its timeout and then gets :class:`InboxFullError`; nothing is ever dropped.
Messages whose deadline or TTL passed while queued are never handed to the consumer:
:meth:`Inbox.get` passes them to the ``on_expired`` hook (the bus dead-letters them)
and takes the next one. Closing wakes every waiter with the closing error and returns
the undelivered messages to the caller.

The waiting logic follows :class:`asyncio.Queue` (futures woken one at a time, and a
woken-but-cancelled waiter passes its wake-up on), without its per-item overhead.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from backend.bus.errors import InboxFullError
from backend.clock import utc_now
from backend.errors import SylkError
from backend.messages import Message

Clock = Callable[[], float]
WallClock = Callable[[], datetime]
# (message, seconds it spent queued, clock reading now)
QueueHook = Callable[[Message[Any], float, float], None]

_Entry = tuple[int, int, float, Message[Any]]


def _wake_next(waiters: list[asyncio.Future[None]]) -> None:
    while waiters:
        waiter = waiters.pop(0)
        if not waiter.done():
            waiter.set_result(None)
            return


class Inbox:
    """An agent's inbox. The agent's consumer calls :meth:`get`; senders go through the bus."""

    __slots__ = (
        "_clock",
        "_closed",
        "_getters",
        "_heap",
        "_nonempty_since",
        "_on_delivered",
        "_on_expired",
        "_putters",
        "_seq",
        "_wall",
        "agent",
        "busy_since",
        "capacity",
        "delivered",
        "last_drained_at",
        "session_id",
    )

    def __init__(
        self,
        session_id: str,
        agent: str,
        capacity: int,
        *,
        clock: Clock = time.monotonic,
        wall_clock: WallClock = utc_now,
        on_expired: QueueHook | None = None,
        on_delivered: QueueHook | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.session_id = session_id
        self.agent = agent
        self.capacity = capacity
        self._clock = clock
        self._wall = wall_clock
        self._on_expired = on_expired
        self._on_delivered = on_delivered
        self._heap: list[_Entry] = []
        self._seq = 0
        self._getters: list[asyncio.Future[None]] = []
        self._putters: list[asyncio.Future[None]] = []
        self._closed: SylkError | None = None
        self._nonempty_since = 0.0
        self.delivered = 0
        # Registration counts as a drain: a new inbox is not stalled.
        self.last_drained_at: float = clock()
        # Set by the consumer while its handler works on a message.
        self.busy_since: float | None = None

    # -- state ---------------------------------------------------------------------
    def qsize(self) -> int:
        return len(self._heap)

    def __len__(self) -> int:
        return len(self._heap)

    def empty(self) -> bool:
        return not self._heap

    def full(self) -> bool:
        return len(self._heap) >= self.capacity

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def waiting_senders(self) -> int:
        return sum(1 for f in self._putters if not f.done())

    def waiting_since(self) -> float | None:
        """Clock time since when work has waited: queued messages without a drain, or
        the message the handler has been busy with; None if idle.

        The later of the last drain and the moment the inbox stopped being empty, so an
        inbox that was idle for an hour and just received a message is not "stalled".
        """
        waiting = max(self.last_drained_at, self._nonempty_since) if self._heap else None
        # A handler stuck on one message stalls the agent even with nothing queued.
        starts = [t for t in (waiting, self.busy_since) if t is not None]
        return min(starts) if starts else None

    def peek(self) -> list[Message[Any]]:
        """The queued messages in delivery order (a copy; for inspection only)."""
        return [entry[3] for entry in sorted(self._heap)]

    # -- putting -------------------------------------------------------------------
    def try_put(self, message: Message[Any]) -> float | None:
        """Enqueue if there is room: the clock reading, or None when full."""
        if self._closed is not None:
            raise self._closed
        heap = self._heap
        if len(heap) >= self.capacity:
            return None
        now = self._clock()
        if not heap:
            self._nonempty_since = now
        self._seq += 1
        heapq.heappush(heap, (-message.priority, self._seq, now, message))
        if self._getters:
            _wake_next(self._getters)
        return now

    def put_nowait(self, message: Message[Any]) -> float:
        """Enqueue now or raise :class:`InboxFullError`; returns the clock reading."""
        now = self.try_put(message)
        if now is None:
            raise InboxFullError(self.session_id, self.agent, self.capacity, 0.0)
        return now

    async def put(self, message: Message[Any], *, timeout: float) -> float:
        """Enqueue, waiting up to ``timeout`` seconds for a slot; returns the time waited."""
        if len(self._heap) < self.capacity or self._closed is not None:
            self.put_nowait(message)
            return 0.0
        if timeout <= 0:
            raise InboxFullError(self.session_id, self.agent, self.capacity, 0.0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout(timeout):
                while len(self._heap) >= self.capacity:
                    if self._closed is not None:
                        raise self._closed
                    putter = loop.create_future()
                    self._putters.append(putter)
                    try:
                        await putter
                    except BaseException:
                        putter.cancel()
                        if putter in self._putters:
                            self._putters.remove(putter)
                        if not self.full() and not putter.cancelled():
                            _wake_next(self._putters)
                        raise
        except TimeoutError:
            waited = loop.time() - started
            raise InboxFullError(self.session_id, self.agent, self.capacity, waited) from None
        self.put_nowait(message)
        return loop.time() - started

    # -- getting -------------------------------------------------------------------
    def get_nowait(self) -> Message[Any] | None:
        """The next deliverable message, or None if there is none right now."""
        while self._heap:
            message = self._pop()
            if message is not None:
                return message
        if self._closed is not None:
            raise self._closed
        return None

    async def get(self) -> Message[Any]:
        """Wait for the next deliverable message (expired ones are skipped and reported)."""
        while True:
            while not self._heap:
                if self._closed is not None:
                    raise self._closed
                getter = asyncio.get_running_loop().create_future()
                self._getters.append(getter)
                try:
                    await getter
                except BaseException:
                    getter.cancel()
                    if getter in self._getters:
                        self._getters.remove(getter)
                    if self._heap and not getter.cancelled():
                        _wake_next(self._getters)
                    raise
            message = self._pop()
            if message is not None:
                return message

    def _pop(self) -> Message[Any] | None:
        _, _, queued_at, message = heapq.heappop(self._heap)
        now = self._clock()
        self.last_drained_at = now
        if self._putters:
            _wake_next(self._putters)
        if (message.deadline is not None or message.ttl is not None) and message.is_expired(
            self._wall()
        ):
            if self._on_expired is not None:
                self._on_expired(message, now - queued_at, now)
            return None
        self.delivered += 1
        if self._on_delivered is not None:
            self._on_delivered(message, now - queued_at, now)
        return message

    def take_expired(self) -> list[Message[Any]]:
        """Remove and return every queued message whose deadline or TTL has passed."""
        wall = self._wall()
        keep = [e for e in self._heap if not e[3].is_expired(wall)]
        if len(keep) == len(self._heap):
            return []
        gone = [e[3] for e in sorted(self._heap) if e[3].is_expired(wall)]
        heapq.heapify(keep)
        self._heap = keep
        for _ in gone:
            _wake_next(self._putters)
        return gone

    # -- closing -------------------------------------------------------------------
    def close(self, error: SylkError) -> list[Message[Any]]:
        """Refuse further use, wake every waiter with ``error``, return what was queued."""
        self._closed = error
        left = [entry[3] for entry in sorted(self._heap)]
        self._heap = []
        for waiter in (*self._getters, *self._putters):
            if not waiter.done():
                waiter.set_result(None)
        self._getters.clear()
        self._putters.clear()
        return left
