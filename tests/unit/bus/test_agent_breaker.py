"""Agent circuit breakers: closed -> open -> half-open -> closed/open, on a fake clock."""

from __future__ import annotations

import pytest

from backend.bus.breakers import AgentBreaker, AgentBreakers
from backend.bus.bus import Bus
from backend.bus.errors import AgentUnavailableError, is_transient
from tests.support.clocks import FakeClock
from tests.unit.bus.bus_support import msg


def breaker(clock: FakeClock, **kwargs: float) -> tuple[AgentBreaker, list[tuple[str, str]]]:
    changes: list[tuple[str, str]] = []
    b = AgentBreaker(
        "s1",
        "librarian",
        threshold=int(kwargs.get("threshold", 3)),
        cooldown=kwargs.get("cooldown", 10.0),
        clock=clock,
        on_change=lambda s, a, old, new: changes.append((old, new)),
    )
    return b, changes


def state(b: AgentBreaker) -> str:
    return b.state  # read afresh (mypy would narrow b.state across calls)


def fail(b: AgentBreaker, times: int = 1) -> None:
    for _ in range(times):
        b.record_failure(b.acquire())


def test_opens_after_threshold_consecutive_failures() -> None:
    clock = FakeClock()
    b, changes = breaker(clock)
    fail(b, 2)
    b.record_success(b.acquire())  # a success resets the count
    fail(b, 2)
    assert state(b) == "closed"
    fail(b)
    assert state(b) == "open" and changes == [("closed", "open")]
    with pytest.raises(AgentUnavailableError) as info:
        b.check()
    assert info.value.retry_after == pytest.approx(10.0)
    assert is_transient(info.value) and info.value.failures == 3
    with pytest.raises(AgentUnavailableError):
        b.acquire()


def test_half_open_probe_success_closes() -> None:
    clock = FakeClock()
    b, changes = breaker(clock)
    fail(b, 3)
    clock.advance(9.9)
    with pytest.raises(AgentUnavailableError):
        b.check()
    clock.advance(0.2)
    b.check()  # cool-down over: messages may queue again
    assert state(b) == "open"
    probe = b.acquire()
    assert probe.probe and b.state == "half_open"
    with pytest.raises(AgentUnavailableError) as info:
        b.acquire()  # only one probe at a time
    assert info.value.retry_after is None
    b.record_success(probe)
    assert state(b) == "closed" and b.failures == 0
    assert changes == [("closed", "open"), ("open", "half_open"), ("half_open", "closed")]


def test_half_open_probe_failure_reopens_for_a_full_cooldown() -> None:
    clock = FakeClock()
    b, _ = breaker(clock)
    fail(b, 3)
    clock.advance(10)
    probe = b.acquire()
    b.record_failure(probe)
    assert state(b) == "open" and b.retry_after() == pytest.approx(10.0)
    clock.advance(5)
    with pytest.raises(AgentUnavailableError):
        b.acquire()


def test_a_neutral_probe_frees_the_slot() -> None:
    clock = FakeClock()
    b, _ = breaker(clock)
    fail(b, 3)
    clock.advance(10)
    b.record_neutral(b.acquire())
    assert state(b) == "half_open"
    assert b.acquire().probe


def test_registry_is_per_session_and_agent() -> None:
    clock = FakeClock()
    breakers = AgentBreakers(threshold=1, cooldown=5, clock=clock)
    b = breakers.get("s1", "librarian")
    b.record_failure(b.acquire())
    assert breakers.state("s1", "librarian") == "open"
    assert breakers.state("s2", "librarian") == "closed"
    assert breakers.state("s1", "academic") == "closed"
    breakers.check("s2", "librarian")  # another session's agent of the same name is fine
    assert breakers.states("s1") == {"librarian": "open"}
    breakers.drop("s1")
    assert breakers.states("s1") == {}


async def test_the_bus_fails_fast_for_an_open_agent() -> None:
    clock = FakeClock()
    breakers = AgentBreakers(threshold=1, cooldown=5, clock=clock)
    bus = Bus(breakers=breakers, clock=clock)
    bus.register("s1", "librarian")
    b = breakers.get("s1", "librarian")
    b.record_failure(b.acquire())
    with pytest.raises(AgentUnavailableError):
        await bus.send(msg())
    assert bus.inbox("s1", "librarian").qsize() == 0 and len(bus.dead_letters) == 0
    clock.advance(5)
    await bus.send(msg())
    assert bus.inbox("s1", "librarian").qsize() == 1


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        AgentBreaker("s", "a", threshold=0)
    with pytest.raises(ValueError):
        AgentBreaker("s", "a", cooldown=-1)
