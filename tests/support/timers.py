"""A timer that only strikes when a test says so.

:class:`FakeTimer` stands in for a ``Callable[[float, Callable[[], None]], handle]``
timer such as ``loop.call_later`` (the model client's deadlines): arming it runs
nothing, and a callback runs only when the test calls :meth:`FakeTimer.fire` (every
armed timer, now) or :meth:`FakeTimer.advance` (those due within that many seconds of
its own :class:`~tests.support.clocks.FakeClock`). So a test can let the deadline pass
exactly after the event it has seen, however fast or slow the machine is.

Callbacks run in the caller's thread and call stack, as the loop would run them on
its thread; an exception in one propagates to the test.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.support.clocks import FakeClock


class FakeTimerHandle:
    """One armed callback; ``cancel`` disarms it as ``asyncio.TimerHandle.cancel`` does."""

    def __init__(self, due: float, delay: float, callback: Callable[[], None]) -> None:
        self.due = due
        self.delay = delay
        self.callback = callback
        self.cancelled = False
        self.fired = False

    @property
    def pending(self) -> bool:
        return not (self.cancelled or self.fired)

    def cancel(self) -> None:
        self.cancelled = True


class FakeTimer:
    """Records what is armed; runs callbacks only on :meth:`fire` or :meth:`advance`."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.handles: list[FakeTimerHandle] = []  # every timer ever armed, in order

    def __call__(self, delay: float, callback: Callable[[], None]) -> FakeTimerHandle:
        handle = FakeTimerHandle(self.clock.now + delay, delay, callback)
        self.handles.append(handle)
        return handle

    @property
    def pending(self) -> list[FakeTimerHandle]:
        """The armed timers that have neither fired nor been cancelled."""
        return [h for h in self.handles if h.pending]

    @property
    def delays(self) -> list[float]:
        """The delay of every timer ever armed, in order."""
        return [h.delay for h in self.handles]

    def fire(self) -> int:
        """Run every pending callback now (the clock jumps to the latest due); how many ran.

        Firing with nothing armed is a mistake in the test, so it fails loudly.
        """
        due = self.pending
        if not due:
            raise AssertionError("FakeTimer.fire(): no timer is armed")
        self.clock.now = max(self.clock.now, *(h.due for h in due))
        return self._run(due)

    def advance(self, seconds: float) -> int:
        """Move the clock on; run the callbacks now due, earliest first; how many ran."""
        self.clock.advance(seconds)
        return self._run([h for h in self.pending if h.due <= self.clock.now])

    @staticmethod
    def _run(handles: list[FakeTimerHandle]) -> int:
        ran = 0
        for handle in sorted(handles, key=lambda h: h.due):
            if handle.pending:  # an earlier callback may have cancelled it
                handle.fired = True
                handle.callback()
                ran += 1
        return ran
