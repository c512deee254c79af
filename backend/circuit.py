"""The circuit-breaker state machine shared by model providers and agents.

closed -> open after ``threshold`` consecutive failures -> after ``cooldown`` one
half-open probe is let through (everyone else is refused while it is in flight)
-> closed on its success, open again for a full cool-down on its failure. Any
success closes: it is evidence of health even from a call admitted earlier.
Subclasses say how a refusal is spelled (:meth:`_refusal`) and may watch state
changes (:meth:`_changed`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Clock = Callable[[], float]
BreakerState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class Permit:
    """Permission for one call; ``probe`` marks the half-open test call."""

    probe: bool = False


# Permits are immutable: the ordinary one and the probe one are shared.
PERMIT = Permit()
PROBE = Permit(probe=True)


class CircuitState:
    def __init__(
        self, *, threshold: int = 5, cooldown: float = 30.0, clock: Clock = time.monotonic
    ) -> None:
        if threshold < 1:
            raise ValueError("threshold must be at least 1")
        if cooldown < 0:
            raise ValueError("cooldown must not be negative")
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probe_in_flight = False

    @property
    def state(self) -> BreakerState:
        return self._state

    @property
    def failures(self) -> int:
        return self._failures

    def cooling_for(self) -> float:
        """Seconds left of the cool-down while open (0 or less once it is over)."""
        return self.cooldown - (self._clock() - self._opened_at)

    def acquire(self) -> Permit:
        """Permission for one call, or the subclass's refusal."""
        if self._state == "closed":
            return PERMIT
        if self._state == "open":
            left = self.cooling_for()
            if left > 0:
                raise self._refusal(left, probing=False)
            self._set("half_open")
        if self._probe_in_flight:
            raise self._refusal(None, probing=True)
        self._probe_in_flight = True
        return PROBE

    def record_success(self, permit: Permit) -> None:
        if permit.probe:
            self._probe_in_flight = False
        self._failures = 0
        self._set("closed")

    def record_failure(self, permit: Permit) -> None:
        self._failures += 1
        if permit.probe:
            self._probe_in_flight = False
            self._open()
        elif self._state == "closed" and self._failures >= self.threshold:
            self._open()
        # A straggler failing while open or half-open leaves the probe to decide.

    def record_neutral(self, permit: Permit) -> None:
        """Neither success nor failure (e.g. a bad request, a cancellation)."""
        if permit.probe:
            self._probe_in_flight = False

    def _open(self) -> None:
        self._opened_at = self._clock()
        self._set("open")

    def _set(self, state: BreakerState) -> None:
        old, self._state = self._state, state
        if old != state:
            self._changed(old, state)

    def _changed(self, old: BreakerState, new: BreakerState) -> None:
        """Called on every state change; nothing by default."""

    def _refusal(self, retry_after: float | None, *, probing: bool) -> Exception:
        raise NotImplementedError
