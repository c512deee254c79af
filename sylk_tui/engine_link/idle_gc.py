"""Full garbage collections that stay short while the user works, and a thorough one
when input is quiet.

After start-up the heap is frozen (``EngineBridge._freeze_heap``), but everything a
session brings on screen later (its transcript, its drawn blocks) is long-lived too,
and each of CPython's automatic full collections walked all of it: with 500 sessions
shown one after another, one switch in three took 100-180 ms. Here every automatic
full collection ends with ``gc.freeze()``, so the next one walks only what came since
(a few switches' worth of objects), and they run a quarter as often as by default.
Frozen objects are still freed by reference counting; only garbage in reference
cycles would wait, so once input has been quiet
for ``QUIET_S`` after such a collection the collector unfreezes, collects everything
and freezes again (the one slow collection, while nobody types). Closing undoes it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from time import monotonic
from typing import Any

QUIET_S = 1.5
"""Seconds without a key or a click before the thorough collection runs."""
CHECK_S = 1.0
"""How often the collector looks (a timer on the app's loop)."""
OLD_GEN_THRESHOLD = 40
"""Young collections between full ones (CPython's default is 10): fewer, each walking
only what came since the last (500 sessions x 200 messages, 100 switches: p95 41 ms,
max 95 ms, RSS 1.19x; at 10, p95 68 ms; at 100, max 169 ms; benchmarks/RESULTS.md)."""


class IdleCollector:
    """``start`` once the heap is frozen; ``input`` on every key or click; ``check`` from
    a timer; ``stop`` when the app closes."""

    def __init__(self, clock: Callable[[], float] = monotonic) -> None:
        self._clock = clock
        self._last_input = clock()
        self._started = False
        self._saved = gc.get_threshold()
        self.refrozen = 0  # automatic full collections followed by a freeze, since the last sweep
        self.sweeps = 0  # thorough collections run while input was quiet

    @property
    def running(self) -> bool:
        return self._started

    def start(self) -> None:
        if not self._started:
            self._started = True
            young, middle, old = self._saved = gc.get_threshold()
            gc.set_threshold(young, middle, max(old, OLD_GEN_THRESHOLD))
            gc.callbacks.append(self._after_collection)

    def input(self) -> None:
        self._last_input = self._clock()

    def _after_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            gc.freeze()  # the survivors join the frozen heap: the next walk is short
            self.refrozen += 1

    def check(self) -> bool:
        """Collect everything if automatic collections froze garbage since the last time
        and input is quiet; True when it ran."""
        if not self._started or not self.refrozen:
            return False
        if self._clock() - self._last_input < QUIET_S:
            return False
        gc.callbacks.remove(self._after_collection)
        try:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        finally:
            gc.callbacks.append(self._after_collection)
        self.refrozen = 0
        self.sweeps += 1
        return True

    def stop(self) -> None:
        if self._started:
            self._started = False
            gc.callbacks.remove(self._after_collection)
            gc.set_threshold(*self._saved)
