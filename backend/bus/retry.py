"""The retry queue: transient delivery failures are tried again later, then dead-lettered.

Transient means ``retryable`` (see :func:`~backend.bus.errors.is_transient`): a
full inbox, an agent whose circuit is open, or a handler that raised
:class:`TransientAgentError` (or a retryable provider error).

Attempts follow the envelope. ``attempt`` counts delivery attempts made so far and
is incremented before each one; ``max_attempts`` is the envelope's, or the queue's
default (3) which is then written into the envelope. When the last attempt fails
the message is dead-lettered (``max_attempts``). The wait before attempt ``n + 1``
is :class:`~backend.llm.resilience.RetryPolicy`'s capped exponential backoff with
full jitter; an error's ``retry_after`` (e.g. an open breaker's remaining cool-down)
is a floor; a wait that would run past the message's deadline dead-letters it now
(``expired``) instead of retrying in vain.

Retries run on one owned background task (``guide-retry-queue``) that sends without
waiting for space (``timeout=0``), so one slow agent cannot hold up other retries.
:meth:`RetryQueue.aclose` cancels the task and dead-letters what was still waiting
(``retry_abandoned``). With a fake clock, drive it with :meth:`RetryQueue.run_due`.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.bus.bus import Bus
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import BusError, MessageExpiredError, is_transient
from backend.bus.inbox import Clock
from backend.llm.resilience import RetryPolicy
from backend.messages import Message

log = logging.getLogger(__name__)


class DeliveryResult(StrEnum):
    DELIVERED = "delivered"  # in the target's inbox (or resolved a pending request)
    RETRYING = "retrying"  # failed transiently; a retry is scheduled
    DEAD_LETTERED = "dead_lettered"


@dataclass(order=True, slots=True)
class _Retry:
    due: float
    seq: int
    message: Message[Any] = field(compare=False)
    error: str = field(compare=False)


class RetryStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    waiting: int
    capacity: int
    scheduled: int
    retried: int
    delivered: int
    dead_lettered: int


def _retry_after(error: BaseException) -> float | None:
    value = getattr(error, "retry_after", None)
    return float(value) if isinstance(value, int | float) else None


class RetryQueue:
    def __init__(
        self,
        bus: Bus,
        *,
        policy: RetryPolicy | None = None,
        max_attempts: int = 3,
        capacity: int = 10_000,
        clock: Clock | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.bus = bus
        self.policy = policy or RetryPolicy(base_delay=0.1, max_delay=10.0, jitter="full")
        self.max_attempts = max_attempts
        self.capacity = capacity
        self._clock = clock or bus.clock
        self._heap: list[_Retry] = []
        self._seq = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._scheduled = 0
        self._retried = 0
        self._delivered = 0
        self._dead = 0

    # -- entry points --------------------------------------------------------------
    async def deliver(
        self,
        message: Message[Any],
        *,
        timeout: float | None = None,
    ) -> DeliveryResult:
        """Send now (one attempt); on a transient failure schedule a retry.

        Non-transient errors (unknown session or agent) are raised: they are the
        caller's to fix, not something time will heal.
        """
        limit = message.max_attempts or self.max_attempts
        if message.attempt >= limit:
            return self._give_up(message, DeadLetterReason.MAX_ATTEMPTS, "no attempts left")
        self._count_attempt(message, limit)
        try:
            await self.bus.send(message, timeout=timeout)
        except MessageExpiredError:
            self._dead += 1
            return DeliveryResult.DEAD_LETTERED
        except BusError as exc:
            if not is_transient(exc):
                raise
            return self.schedule(message, exc)
        self._delivered += 1
        return DeliveryResult.DELIVERED

    def schedule(self, message: Message[Any], error: BaseException) -> DeliveryResult:
        """Retry ``message`` later after ``error`` (or dead-letter it if it is out of tries)."""
        attempts = max(message.attempt, 1)
        limit = message.max_attempts or self.max_attempts
        if attempts >= limit:
            return self._give_up(message, DeadLetterReason.MAX_ATTEMPTS, error)
        if self._closed:
            return self._give_up(message, DeadLetterReason.RETRY_ABANDONED, error)
        if len(self._heap) >= self.capacity:
            return self._give_up(message, DeadLetterReason.RETRY_QUEUE_FULL, error)
        remaining: float | None = None
        expires = message.expires_at()
        if expires is not None:
            remaining = (expires - self.bus.wall_clock()).total_seconds()
        delay = self.policy.delay(attempts, retry_after=_retry_after(error), remaining=remaining)
        if delay is None:
            return self._give_up(message, DeadLetterReason.EXPIRED, error)
        if message.max_attempts is None:
            message.max_attempts = limit
        if message.attempt == 0:  # it came straight from bus.send: that delivery counts
            message.attempt = 1
        self._seq += 1
        heapq.heappush(self._heap, _Retry(self._clock() + delay, self._seq, message, str(error)))
        self._scheduled += 1
        self._wake.set()
        return DeliveryResult.RETRYING

    async def run_due(self) -> int:
        """Attempt every retry that is due now; returns how many were attempted."""
        now = self._clock()
        due: list[_Retry] = []
        while self._heap and self._heap[0].due <= now:
            due.append(heapq.heappop(self._heap))
        for item in due:
            await self._attempt(item.message)
        return len(due)

    # -- inspection ----------------------------------------------------------------
    def waiting(self, session_id: str | None = None) -> int:
        if session_id is None:
            return len(self._heap)
        return sum(1 for r in self._heap if r.message.session_id == session_id)

    def queued(self, session_id: str) -> list[Message[Any]]:
        """The session's messages waiting for a retry, soonest first (a copy)."""
        return [r.message for r in sorted(self._heap) if r.message.session_id == session_id]

    def next_due_in(self) -> float | None:
        return None if not self._heap else max(0.0, self._heap[0].due - self._clock())

    def stats(self) -> RetryStats:
        return RetryStats(
            waiting=len(self._heap),
            capacity=self.capacity,
            scheduled=self._scheduled,
            retried=self._retried,
            delivered=self._delivered,
            dead_lettered=self._dead,
        )

    def cancel_session(self, session_id: str) -> int:
        """Dead-letter the session's waiting retries now (e.g. when it is closed)."""
        doomed = [r for r in self._heap if r.message.session_id == session_id]
        if not doomed:
            return 0
        self._heap = [r for r in self._heap if r.message.session_id != session_id]
        heapq.heapify(self._heap)
        for item in doomed:
            self._give_up(item.message, DeadLetterReason.SESSION_CLOSED, item.error)
        return len(doomed)

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="guide-retry-queue"
            )

    async def aclose(self) -> int:
        """Stop retrying; dead-letter what is still waiting (count returned)."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        left, self._heap = self._heap, []
        for item in sorted(left):
            self._give_up(item.message, DeadLetterReason.RETRY_ABANDONED, item.error)
        return len(left)

    async def _run(self) -> None:
        while True:
            delay = self.next_due_in()
            if delay is not None and delay <= 0:
                await self.run_due()
                continue
            self._wake.clear()
            try:
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            except TimeoutError:
                pass

    # -- internals -----------------------------------------------------------------
    async def _attempt(self, message: Message[Any]) -> None:
        limit = message.max_attempts or self.max_attempts
        self._count_attempt(message, limit)
        self._retried += 1
        try:
            await self.bus.send(message, timeout=0)
        except MessageExpiredError:
            self._dead += 1
        except BusError as exc:
            if is_transient(exc):
                self.schedule(message, exc)
            else:
                self._give_up(message, DeadLetterReason.UNDELIVERABLE, exc)
        except Exception as exc:  # a bug must not kill the retry task
            log.exception("retry of message %s failed unexpectedly", message.id)
            self._give_up(message, DeadLetterReason.UNDELIVERABLE, exc)
        else:
            self._delivered += 1

    @staticmethod
    def _count_attempt(message: Message[Any], limit: int) -> None:
        if message.max_attempts is None:
            message.max_attempts = max(limit, message.attempt + 1)
        message.attempt += 1

    def _give_up(
        self, message: Message[Any], reason: DeadLetterReason, error: BaseException | str
    ) -> DeliveryResult:
        self.bus.dead_letter(message, reason, error=error)
        self._dead += 1
        return DeliveryResult.DEAD_LETTERED
