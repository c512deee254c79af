"""Clocks that only move when a test moves them.

The code under test reads time in one of two shapes, and each gets a double:

* :class:`FakeClock` stands in for a monotonic ``Callable[[], float]`` such as
  ``time.monotonic`` (breakers, retry queues, caches, flow logs);
* :class:`FakeWall` stands in for a UTC wall clock ``Callable[[], datetime]`` such as
  ``backend.clock.utc_now`` (message deadlines, dead letters, the chronicle).

Both are callables, expose the reading as a settable ``now`` (``clock.now += 30``,
``wall.now = NOW - timedelta(hours=2)``), and move forward with :meth:`advance`,
which takes seconds positionally and larger units by name (``advance(minutes=4,
seconds=59)``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _span(seconds: float, minutes: float, hours: float, days: float) -> timedelta:
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


class FakeClock:
    """A monotonic clock in float seconds."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(
        self, seconds: float = 0.0, *, minutes: float = 0.0, hours: float = 0.0, days: float = 0.0
    ) -> None:
        self.now += _span(seconds, minutes, hours, days).total_seconds()


class FakeWall:
    """A timezone-aware UTC wall clock."""

    def __init__(self, start: datetime = EPOCH) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(
        self, seconds: float = 0.0, *, minutes: float = 0.0, hours: float = 0.0, days: float = 0.0
    ) -> None:
        self.now += _span(seconds, minutes, hours, days)
