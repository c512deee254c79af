"""The retry queue: attempts from the envelope, backoff with jitter, then dead letter."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from backend.bus.breakers import AgentBreakers
from backend.bus.bus import Bus
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import TransientAgentError, UnknownAgentError
from backend.bus.retry import DeliveryResult, RetryQueue
from backend.llm.resilience import RetryPolicy
from tests.support.clocks import FakeClock, FakeWall
from tests.support.polling import until
from tests.unit.bus.bus_support import msg


def setup(capacity: int = 1, **policy: float | str) -> tuple[Bus, RetryQueue, FakeClock, FakeWall]:
    clock, wall = FakeClock(), FakeWall()
    bus = Bus(clock=clock, wall_clock=wall)
    bus.register("s1", "librarian", capacity=capacity)
    settings: dict[str, float | str] = {"base_delay": 1.0, "max_delay": 8.0, "jitter": "none"}
    settings.update(policy)
    retry = RetryQueue(bus, policy=RetryPolicy(rng=random.Random(3), **settings))  # type: ignore[arg-type]
    return bus, retry, clock, wall


async def test_a_delivered_message_counts_one_attempt() -> None:
    bus, retry, _, _ = setup()
    message = msg()
    assert await retry.deliver(message) is DeliveryResult.DELIVERED
    assert message.attempt == 1 and message.max_attempts == 3
    assert bus.inbox("s1", "librarian").qsize() == 1


async def test_full_inbox_retries_with_backoff_then_delivers() -> None:
    bus, retry, clock, _ = setup()
    inbox = bus.inbox("s1", "librarian")
    await bus.send(msg(payload={"text": "blocker"}))
    message = msg(max_attempts=4)
    assert await retry.deliver(message, timeout=0) is DeliveryResult.RETRYING
    assert message.attempt == 1 and retry.waiting() == 1
    assert retry.next_due_in() == pytest.approx(1.0)  # base delay after attempt 1

    clock.advance(0.5)
    assert await retry.run_due() == 0  # not due yet
    clock.advance(0.5)
    assert await retry.run_due() == 1  # attempt 2: still full
    assert message.attempt == 2 and retry.next_due_in() == pytest.approx(2.0)

    await inbox.get()  # the consumer makes room
    clock.advance(2.0)
    assert await retry.run_due() == 1  # attempt 3 gets in
    assert message.attempt == 3 and retry.waiting() == 0
    assert (await inbox.get()) is message
    assert retry.stats().delivered == 1 and retry.stats().retried == 2


async def test_exhausted_attempts_are_dead_lettered() -> None:
    bus, retry, clock, _ = setup()
    await bus.send(msg())
    message = msg(max_attempts=2)
    assert await retry.deliver(message, timeout=0) is DeliveryResult.RETRYING
    clock.advance(10)
    await retry.run_due()
    assert retry.waiting() == 0
    [entry] = bus.dead_letters.entries("s1")
    assert entry.reason is DeadLetterReason.MAX_ATTEMPTS
    assert entry.attempts == 2 and "full" in (entry.error or "")


async def test_backoff_uses_full_jitter_within_the_ceiling() -> None:
    bus, retry, _, _ = setup(jitter="full", base_delay=1.0, max_delay=4.0)
    await bus.send(msg())
    delays = []
    for _ in range(50):
        message = msg(max_attempts=10, attempt=3)
        retry.schedule(message, TransientAgentError("flaky"))
        delays.append(retry._heap[-1].due - retry._clock())
    assert all(0 <= d <= 4.0 for d in delays)
    assert len({round(d, 6) for d in delays}) > 10  # jittered, not all equal


async def test_retry_after_is_a_floor() -> None:
    _, retry, _, _ = setup()
    retry.schedule(msg(), TransientAgentError("busy", retry_after=5.0))
    assert retry.next_due_in() == pytest.approx(5.0)


async def test_no_time_left_before_the_deadline_dead_letters_now() -> None:
    bus, retry, _, wall = setup()
    message = msg(timestamp=wall.now, ttl=timedelta(seconds=2))
    result = retry.schedule(message, TransientAgentError("busy", retry_after=5.0))
    assert result is DeliveryResult.DEAD_LETTERED
    assert bus.dead_letters.entries()[0].reason is DeadLetterReason.EXPIRED


async def test_unknown_target_is_raised_not_retried() -> None:
    _, retry, _, _ = setup()
    with pytest.raises(UnknownAgentError):
        await retry.deliver(msg(target="nobody"))


async def test_a_retry_whose_agent_left_is_dead_lettered_undeliverable() -> None:
    bus, retry, clock, _ = setup()
    retry.schedule(msg(), TransientAgentError("flaky"))
    bus.unregister("s1", "librarian")
    clock.advance(5)
    await retry.run_due()
    assert bus.dead_letters.entries()[-1].reason is DeadLetterReason.UNDELIVERABLE


async def test_an_open_breaker_defers_by_its_cooldown() -> None:
    clock = FakeClock()
    breakers = AgentBreakers(threshold=1, cooldown=7.0, clock=clock)
    bus = Bus(clock=clock, breakers=breakers)
    bus.register("s1", "librarian")
    breaker = breakers.get("s1", "librarian")
    breaker.record_failure(breaker.acquire())
    retry = RetryQueue(bus, policy=RetryPolicy(base_delay=0.1, jitter="none"))
    assert await retry.deliver(msg()) is DeliveryResult.RETRYING
    assert retry.next_due_in() == pytest.approx(7.0)
    clock.advance(7.0)
    await retry.run_due()
    assert bus.inbox("s1", "librarian").qsize() == 1


async def test_cancel_session_dead_letters_its_retries_only() -> None:
    clock = FakeClock()
    bus = Bus(clock=clock)
    retry = RetryQueue(bus)
    retry.schedule(msg("s1"), TransientAgentError("x"))
    retry.schedule(msg("s2"), TransientAgentError("x"))
    assert retry.cancel_session("s1") == 1
    assert retry.waiting("s1") == 0 and retry.waiting("s2") == 1
    assert bus.dead_letters.entries("s1")[0].reason is DeadLetterReason.SESSION_CLOSED


async def test_background_task_retries_and_closes_cleanly() -> None:
    bus = Bus()
    inbox = bus.register("s1", "librarian", capacity=1)
    retry = RetryQueue(bus, policy=RetryPolicy(base_delay=0.005, max_delay=0.01, jitter="none"))
    retry.start()
    await bus.send(msg(payload={"text": "blocker"}))
    message = msg(max_attempts=10)
    assert await retry.deliver(message, timeout=0) is DeliveryResult.RETRYING
    await until(lambda: message.attempt >= 2, what="the background task to retry")
    assert retry.waiting() == 1  # retried, still blocked
    await inbox.get()
    await until(lambda: retry.waiting() == 0, what="the retry to get in")
    assert (await inbox.get()) is message

    await bus.send(msg(payload={"text": "blocker"}))
    leftover = msg(max_attempts=10)
    await retry.deliver(leftover, timeout=0)
    assert await retry.aclose() == 1
    assert bus.dead_letters.entries()[-1].reason is DeadLetterReason.RETRY_ABANDONED
    assert retry.schedule(msg(), TransientAgentError("late")) is DeliveryResult.DEAD_LETTERED
