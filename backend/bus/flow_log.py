"""Message-flow observability: what moved where, and how long it took.

Every flow the bus sees (send, deliver, respond, dead-letter) is recorded as a
:class:`Flow` in a fixed-size ring; per-kind and per-routing-tier latencies go into
fixed-size rings too, so memory stays bounded however long Sylk runs. Counts are
exact totals; percentiles are over the most recent ``sample_size`` samples.

Asking for one session's flows never returns another session's.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.messages import Message

Clock = Callable[[], float]


class FlowKind(StrEnum):
    SEND = "send"  # enqueued in the target's inbox (latency: time waiting for a slot)
    DELIVER = "deliver"  # handed to the consumer (latency: time spent queued)
    RESPOND = "respond"  # resolved a pending request (latency: request round trip)
    DEAD_LETTER = "dead_letter"  # latency: the message's age


# A flow as stored: a plain tuple is several times cheaper to build than a dataclass.
_Row = tuple["FlowKind", str, str, str | None, str, str | None, str, float, float]


@dataclass(frozen=True, slots=True)
class Flow:
    kind: FlowKind
    session_id: str
    message_id: str
    correlation_id: str | None
    source: str
    target: str | None
    type: str
    latency_us: float
    at: float


class LatencyStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    count: int
    p50_us: float | None
    p99_us: float | None
    max_us: float | None


class FlowStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    flows: dict[str, LatencyStats]
    routes: dict[str, LatencyStats]
    recorded: int
    retained: int
    capacity: int


class LatencyRing:
    """The last ``size`` samples in a preallocated list, plus an exact total count."""

    __slots__ = ("_next", "_samples", "_size", "count")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self._size = size
        self._samples: list[float] = [0.0] * size
        self._next = 0
        self.count = 0

    def add(self, value: float) -> None:
        i = self._next
        self._samples[i] = value
        self._next = 0 if i + 1 == self._size else i + 1
        self.count += 1

    def values(self) -> list[float]:
        return self._samples[: min(self.count, self._size)]

    def stats(self) -> LatencyStats:
        if not self.count:
            return LatencyStats(count=0, p50_us=None, p99_us=None, max_us=None)
        ordered = sorted(self.values())
        return LatencyStats(
            count=self.count,
            p50_us=percentile(ordered, 50),
            p99_us=percentile(ordered, 99),
            max_us=ordered[-1],
        )


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty list."""
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


class FlowLog:
    def __init__(
        self, *, capacity: int = 4096, sample_size: int = 2048, clock: Clock = time.monotonic
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.sample_size = sample_size
        self._clock = clock
        self._flows: deque[_Row] = deque(maxlen=capacity)
        self._kinds: dict[FlowKind, LatencyRing] = {k: LatencyRing(sample_size) for k in FlowKind}
        self._routes: dict[str, LatencyRing] = {}
        self.recorded = 0

    def record(
        self, kind: FlowKind, message: Message[Any], latency_us: float, at: float | None = None
    ) -> None:
        """One flow of ``message``; ``at`` is the clock reading if the caller has one."""
        self._flows.append(
            (
                kind,
                message.session_id,
                message.id,
                message.correlation_id,
                message.source,
                message.target,
                message.type,
                latency_us,
                self._clock() if at is None else at,
            )
        )
        self._kinds[kind].add(latency_us)
        self.recorded += 1

    def record_route(self, tier: str, latency_us: float) -> None:
        """One routing decision made by ``tier`` (dsl, cache, pattern, model...)."""
        ring = self._routes.get(tier)
        if ring is None:
            ring = self._routes[tier] = LatencyRing(self.sample_size)
        ring.add(latency_us)

    def recent(
        self,
        session_id: str | None = None,
        *,
        kind: FlowKind | None = None,
        correlation_id: str | None = None,
        limit: int = 100,
    ) -> list[Flow]:
        """The newest retained flows (oldest first), optionally for one session only."""
        found: list[Flow] = []
        for row in reversed(self._flows):
            if session_id is not None and row[1] != session_id:
                continue
            if kind is not None and row[0] != kind:
                continue
            if correlation_id is not None and row[3] != correlation_id:
                continue
            found.append(Flow(*row))
            if len(found) >= limit:
                break
        found.reverse()
        return found

    def snapshot(self) -> FlowStats:
        return FlowStats(
            flows={kind.value: ring.stats() for kind, ring in self._kinds.items()},
            routes={tier: ring.stats() for tier, ring in sorted(self._routes.items())},
            recorded=self.recorded,
            retained=len(self._flows),
            capacity=self.capacity,
        )
