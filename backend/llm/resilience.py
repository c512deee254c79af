"""Retry timing and circuit breaking for model calls.

:class:`RetryPolicy` says how long to wait before the next attempt; it never
sleeps itself. :class:`CircuitBreaker` remembers how a provider+model has been
doing and refuses calls while it is failing. Both take an injectable clock
(and the policy an injectable random source) so tests need no real time.

Breaker policy
--------------
* Only failures that say something about the provider's health count towards
  opening: retryable errors (429, 5xx/529, connection, timeout, stream cuts)
  and a stalled attempt that ran out the caller's deadline.
* Auth and bad-request errors are *neutral*: they neither count towards
  opening nor reset the failure count (the provider answered, but the call
  did not succeed). A neutral outcome of the half-open probe frees the probe
  slot, so the next caller probes instead.
* After ``threshold`` consecutive counted failures the breaker opens. After
  ``cooldown`` seconds exactly one caller is let through as the half-open
  probe; everyone else gets :class:`CircuitOpenError` while it is in flight.
  The probe's success closes the breaker, its failure re-opens it for another
  full cool-down.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Literal

from backend.circuit import BreakerState, CircuitState, Clock, Permit
from backend.llm.errors import CircuitOpenError

__all__ = [
    "BreakerRegistry",
    "BreakerState",
    "CircuitBreaker",
    "Permit",
    "RetryPolicy",
]

Jitter = Literal["full", "decorrelated", "none"]


@dataclass
class RetryPolicy:
    """Capped exponential backoff with jitter.

    ``full`` jitter (the default) waits a uniform time in ``[0, ceiling]``
    where ``ceiling = min(max_delay, base_delay * 2**(n-1))``; it spreads a
    crowd of clients best. ``decorrelated`` waits ``uniform(base_delay,
    3 * previous)`` capped at ``max_delay``. ``none`` waits the ceiling.
    A server's ``retry_after`` is a floor that is always honoured, even above
    ``max_delay``; no delay ever runs past the caller's remaining deadline.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: Jitter = "full"
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays must not be negative")
        self.max_delay = max(self.max_delay, self.base_delay)

    def backoff(self, attempt: int, previous: float | None = None) -> float:
        """The jittered wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * math.pow(2, max(0, attempt - 1)))
        if self.jitter == "none":
            return ceiling
        if self.jitter == "decorrelated":
            low = self.base_delay
            high = max(low, 3 * (previous if previous is not None else low))
            return min(self.max_delay, self.rng.uniform(low, high))
        return self.rng.uniform(0, ceiling)

    def delay(
        self,
        attempt: int,
        *,
        previous: float | None = None,
        retry_after: float | None = None,
        remaining: float | None = None,
    ) -> float | None:
        """Seconds to wait before the next attempt, or None if there is no time for one.

        ``remaining`` is what is left of the caller's deadline. A retry_after the
        deadline cannot honour means giving up now rather than sleeping in vain.
        """
        wait = self.backoff(attempt, previous)
        if remaining is not None:
            if remaining <= 0:
                return None
            # Our own backoff leaves the next attempt at least half of what remains.
            wait = min(wait, remaining / 2)
        if retry_after is not None and retry_after > 0:
            if remaining is not None and retry_after >= remaining:
                return None
            wait = max(wait, retry_after)
        return max(0.0, wait)


class CircuitBreaker(CircuitState):
    """The breaker of one provider+model; refusals are :class:`CircuitOpenError`."""

    def __init__(
        self, key: str, *, threshold: int = 5, cooldown: float = 30.0, clock: Clock = time.monotonic
    ) -> None:
        super().__init__(threshold=threshold, cooldown=cooldown, clock=clock)
        self.key = key

    def _refusal(self, retry_in: float | None, *, probing: bool = False) -> CircuitOpenError:
        why = (
            "a probe call is testing it"
            if probing
            else f"it failed {self._failures} times in a row; next try in {retry_in:.1f}s"
        )
        return CircuitOpenError(
            f"circuit open for {self.key}: {why}",
            provider=self.key.split("/", 1)[0],
            retry_after=retry_in,
            help_hint="wait for the provider to recover, or switch provider/model",
        )


class BreakerRegistry:
    """One :class:`CircuitBreaker` per provider+model key, created on first use."""

    def __init__(
        self, *, threshold: int = 5, cooldown: float = 30.0, clock: Clock = time.monotonic
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._breakers: dict[str, CircuitBreaker] = {}

    @staticmethod
    def key(provider: str, model: str) -> str:
        return f"{provider}/{model}"

    def get(self, provider: str, model: str) -> CircuitBreaker:
        key = self.key(provider, model)
        breaker = self._breakers.get(key)
        if breaker is None:
            breaker = CircuitBreaker(
                key, threshold=self.threshold, cooldown=self.cooldown, clock=self._clock
            )
            self._breakers[key] = breaker
        return breaker

    def states(self) -> dict[str, BreakerState]:
        return {key: b.state for key, b in self._breakers.items()}
