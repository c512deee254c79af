"""RetryPolicy timing and CircuitBreaker transitions, on a fake clock."""

from __future__ import annotations

import random
from typing import Any

import pytest

from backend.llm.errors import CircuitOpenError
from backend.llm.resilience import BreakerRegistry, CircuitBreaker, RetryPolicy
from tests.support.clocks import FakeClock


def policy(**kwargs: Any) -> RetryPolicy:
    return RetryPolicy(rng=random.Random(7), **kwargs)


# -- RetryPolicy --------------------------------------------------------------------
def test_no_jitter_is_capped_exponential() -> None:
    p = policy(base_delay=0.5, max_delay=3.0, jitter="none")
    assert [p.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize("attempt", [1, 2, 3, 4, 8, 30])
def test_full_jitter_stays_within_the_capped_ceiling(attempt: int) -> None:
    p = policy(base_delay=0.5, max_delay=4.0, jitter="full")
    ceiling = min(4.0, 0.5 * 2 ** (attempt - 1))
    delays = [p.delay(attempt) for _ in range(500)]
    assert all(d is not None and 0 <= d <= ceiling for d in delays)
    # Full jitter spreads over the whole range, not a corner of it.
    assert min(d for d in delays if d is not None) < ceiling * 0.2
    assert max(d for d in delays if d is not None) > ceiling * 0.8


def test_decorrelated_jitter_grows_from_the_previous_delay_and_is_capped() -> None:
    p = policy(base_delay=0.2, max_delay=2.0, jitter="decorrelated")
    previous = None
    for attempt in range(1, 40):
        delay = p.delay(attempt, previous=previous)
        assert delay is not None
        upper = min(2.0, 3 * (previous if previous is not None else 0.2))
        assert 0.2 <= delay <= max(0.2, upper) + 1e-9
        previous = delay


def test_retry_after_is_honoured_even_above_max_delay() -> None:
    p = policy(base_delay=0.1, max_delay=1.0, jitter="full")
    assert p.delay(1, retry_after=7.5) == 7.5
    assert p.delay(1, retry_after=7.5, remaining=30.0) == 7.5


def test_retry_after_the_deadline_cannot_honour_means_give_up() -> None:
    p = policy(base_delay=0.1, max_delay=1.0)
    assert p.delay(1, retry_after=5.0, remaining=4.0) is None
    assert p.delay(1, retry_after=5.0, remaining=5.0) is None


def test_backoff_is_capped_by_the_remaining_deadline() -> None:
    p = policy(base_delay=10.0, max_delay=60.0, jitter="none")
    assert p.delay(3, remaining=3.0) == 1.5  # half of what remains, for the next attempt
    assert p.delay(1, remaining=0.0) is None
    assert p.delay(1, remaining=-1.0) is None


def test_policy_validates_its_numbers() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    assert RetryPolicy(base_delay=2.0, max_delay=1.0).max_delay == 2.0


# -- CircuitBreaker -----------------------------------------------------------------
def make_breaker(threshold: int = 3, cooldown: float = 10.0) -> tuple[CircuitBreaker, FakeClock]:
    clock = FakeClock()
    return CircuitBreaker("p/m", threshold=threshold, cooldown=cooldown, clock=clock), clock


def fail(breaker: CircuitBreaker, times: int = 1) -> None:
    for _ in range(times):
        breaker.record_failure(breaker.acquire())


def test_opens_after_threshold_consecutive_failures() -> None:
    breaker, _ = make_breaker(threshold=3)
    fail(breaker, 2)
    assert breaker.state == "closed"
    fail(breaker)
    assert breaker.state == "open"
    with pytest.raises(CircuitOpenError) as info:
        breaker.acquire()
    assert info.value.retry_after == pytest.approx(10.0)
    assert "p/m" in str(info.value)


def test_a_success_resets_the_count() -> None:
    breaker, _ = make_breaker(threshold=3)
    fail(breaker, 2)
    breaker.record_success(breaker.acquire())
    fail(breaker, 2)
    assert breaker.state == "closed"
    assert breaker.failures == 2


def test_neutral_outcomes_neither_count_nor_reset() -> None:
    breaker, _ = make_breaker(threshold=2)
    fail(breaker)
    for _ in range(5):  # e.g. auth errors
        breaker.record_neutral(breaker.acquire())
    assert breaker.state == "closed"
    assert breaker.failures == 1
    fail(breaker)
    assert breaker.state == "open"


def test_half_open_lets_exactly_one_probe_through() -> None:
    breaker, clock = make_breaker(threshold=1, cooldown=10.0)
    fail(breaker)
    clock.advance(9.9)
    with pytest.raises(CircuitOpenError):
        breaker.acquire()
    clock.advance(0.2)
    probe = breaker.acquire()
    assert probe.probe
    assert breaker.state == "half_open"
    for _ in range(3):
        with pytest.raises(CircuitOpenError, match="probe"):
            breaker.acquire()
    breaker.record_success(probe)
    assert breaker.state == "closed"
    assert not breaker.acquire().probe


def test_a_failed_probe_reopens_for_a_full_cooldown() -> None:
    breaker, clock = make_breaker(threshold=1, cooldown=10.0)
    fail(breaker)
    clock.advance(10.0)
    breaker.record_failure(breaker.acquire())
    assert breaker.state == "open"
    clock.advance(9.0)
    with pytest.raises(CircuitOpenError):
        breaker.acquire()
    clock.advance(1.0)
    assert breaker.acquire().probe


def test_a_neutral_probe_frees_the_slot_for_the_next_caller() -> None:
    breaker, clock = make_breaker(threshold=1, cooldown=1.0)
    fail(breaker)
    clock.advance(1.0)
    breaker.record_neutral(breaker.acquire())  # cancelled, or an auth error
    assert breaker.state == "half_open"
    assert breaker.acquire().probe


def test_a_straggler_failing_does_not_unseat_the_probe() -> None:
    breaker, clock = make_breaker(threshold=1, cooldown=1.0)
    straggler = breaker.acquire()
    fail(breaker)
    clock.advance(1.0)
    probe = breaker.acquire()
    breaker.record_failure(straggler)
    assert breaker.state == "half_open"
    with pytest.raises(CircuitOpenError):
        breaker.acquire()
    breaker.record_success(probe)
    assert breaker.state == "closed"


def test_registry_keeps_one_breaker_per_provider_and_model() -> None:
    clock = FakeClock()
    registry = BreakerRegistry(threshold=1, cooldown=5.0, clock=clock)
    a = registry.get("anthropic", "m1")
    assert registry.get("anthropic", "m1") is a
    fail(a)
    assert registry.get("anthropic", "m2").state == "closed"
    assert registry.get("openai", "m1").state == "closed"
    assert registry.states() == {
        "anthropic/m1": "open",
        "anthropic/m2": "closed",
        "openai/m1": "closed",
    }
