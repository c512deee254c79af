"""The dead-letter queue: messages that could not be delivered, kept for inspection.

Bounded: when full, the oldest entry is dropped and counted in :meth:`stats`
(``dropped_oldest``), so a storm of failures cannot eat memory. Entries can be
listed (optionally for one session), replayed through a :class:`Sender` (normally
the bus) with ``attempt`` reset, or purged.

Replay gives the message a fresh life: its timestamp becomes now and its deadline
moves by the same amount, so a message dead-lettered for expiry is not expired again
on arrival. If the replayed send fails without being dead-lettered anew (inbox
full, agent not registered), the entry is put back (as the newest) with the error.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from backend.bus.errors import BusError, DeadLetterNotFoundError, MessageExpiredError
from backend.clock import utc_now
from backend.messages import Message, MessageStatus

WallClock = Callable[[], datetime]


class DeadLetterReason(StrEnum):
    EXPIRED = "expired"  # deadline/TTL passed before delivery
    MAX_ATTEMPTS = "max_attempts"  # the retry queue gave up
    HANDLER_FAILED = "handler_failed"  # the agent's handler raised a non-transient error
    CIRCUIT_OPEN = "circuit_open"  # agent unavailable and nobody to retry later
    SESSION_CLOSED = "session_closed"  # still queued when its session was closed
    AGENT_UNREGISTERED = "agent_unregistered"  # still queued when its agent left
    UNDELIVERABLE = "undeliverable"  # no such session/agent by the time of a retry
    RETRY_QUEUE_FULL = "retry_queue_full"
    RETRY_ABANDONED = "retry_abandoned"  # still waiting for a retry when the queue closed
    INTERRUPTED = "interrupted"  # its consumer was stopped while handling it


class Sender(Protocol):
    async def send(self, message: Message[Any], *, timeout: float | None = None) -> None: ...


@dataclass(slots=True)
class DeadLetter:
    id: str
    message: Message[Any]
    reason: DeadLetterReason
    error: str | None
    attempts: int
    session_id: str
    agent: str | None
    at: datetime
    replays: int = 0


class ReplayStatus(StrEnum):
    DELIVERED = "delivered"
    FAILED = "failed"  # could not be sent; the entry is back in the queue
    DEAD_LETTERED = "dead_lettered"  # dead-lettered again (e.g. expired), under a new id


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    dead_letter_id: str
    status: ReplayStatus
    error: str | None = None
    new_dead_letter_id: str | None = None


class DeadLetterStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    size: int
    capacity: int
    added: int
    dropped_oldest: int
    replayed: int
    purged: int
    by_reason: dict[str, int]


class DeadLetterQueue:
    def __init__(
        self,
        *,
        capacity: int = 1000,
        sender: Sender | None = None,
        wall_clock: WallClock = utc_now,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._sender = sender
        self._wall = wall_clock
        self._entries: OrderedDict[str, DeadLetter] = OrderedDict()
        self._seq = 0
        self._added = 0
        self._dropped = 0
        self._replayed = 0
        self._purged = 0
        self._by_reason: Counter[str] = Counter()

    def bind(self, sender: Sender) -> None:
        """Set the sender replays go through, unless one was given already."""
        if self._sender is None:
            self._sender = sender

    def add(
        self,
        message: Message[Any],
        reason: DeadLetterReason,
        *,
        error: BaseException | str | None = None,
        agent: str | None = None,
    ) -> DeadLetter:
        self._seq += 1
        entry = DeadLetter(
            id=f"dl-{self._seq}",
            message=message,
            reason=reason,
            error=None if error is None else str(error),
            attempts=message.attempt,
            session_id=message.session_id,
            agent=agent if agent is not None else message.target,
            at=self._wall(),
        )
        self._entries[entry.id] = entry
        self._added += 1
        self._by_reason[reason.value] += 1
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
            self._dropped += 1
        return entry

    # -- inspection ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def get(self, dead_letter_id: str) -> DeadLetter:
        entry = self._entries.get(dead_letter_id)
        if entry is None:
            raise DeadLetterNotFoundError(dead_letter_id)
        return entry

    def entries(
        self,
        session_id: str | None = None,
        *,
        reason: DeadLetterReason | None = None,
        limit: int | None = None,
    ) -> list[DeadLetter]:
        """Oldest first; only ``session_id``'s entries when it is given."""
        found = [
            e
            for e in self._entries.values()
            if (session_id is None or e.session_id == session_id)
            and (reason is None or e.reason == reason)
        ]
        return found[-limit:] if limit is not None else found

    def stats(self) -> DeadLetterStats:
        return DeadLetterStats(
            size=len(self._entries),
            capacity=self.capacity,
            added=self._added,
            dropped_oldest=self._dropped,
            replayed=self._replayed,
            purged=self._purged,
            by_reason=dict(self._by_reason),
        )

    # -- actions ---------------------------------------------------------------------
    async def replay(self, dead_letter_id: str, *, timeout: float | None = None) -> ReplayOutcome:
        """Send the message again with ``attempt`` reset and a fresh life span."""
        if self._sender is None:
            raise RuntimeError("DeadLetterQueue has no sender to replay through")
        entry = self.get(dead_letter_id)
        del self._entries[dead_letter_id]
        original = entry.message
        now = self._wall()
        shift = now - original.timestamp
        fresh = original.model_copy(
            update={
                "attempt": 0,
                "status": MessageStatus.PENDING,
                "error": None,
                "timestamp": now,
                "deadline": None if original.deadline is None else original.deadline + shift,
                "metadata": {**original.metadata, "replayed_from": dead_letter_id},
            }
        )
        try:
            await self._sender.send(fresh, timeout=timeout)
        except MessageExpiredError as exc:
            self._replayed += 1
            return ReplayOutcome(
                dead_letter_id,
                ReplayStatus.DEAD_LETTERED,
                error=str(exc),
                new_dead_letter_id=exc.dead_letter_id,
            )
        except BusError as exc:
            entry.replays += 1
            entry.error = str(exc)
            self._entries[dead_letter_id] = entry
            return ReplayOutcome(dead_letter_id, ReplayStatus.FAILED, error=str(exc))
        self._replayed += 1
        return ReplayOutcome(dead_letter_id, ReplayStatus.DELIVERED)

    def purge(self, session_id: str | None = None, *, ids: list[str] | None = None) -> int:
        """Drop entries (all, one session's, or the given ids); returns how many."""
        doomed = [
            key
            for key, e in self._entries.items()
            if (session_id is None or e.session_id == session_id) and (ids is None or key in ids)
        ]
        for key in doomed:
            del self._entries[key]
        self._purged += len(doomed)
        return len(doomed)
