"""Agent consumers: handler outcomes feed the breaker, the retry queue and dead letters."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from backend.bus.breakers import AgentBreakers
from backend.bus.bus import Bus
from backend.bus.consumer import AgentConsumers
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import MessageDeadLetteredError, TransientAgentError
from backend.bus.health import HealthMonitor, HealthStatus
from backend.bus.retry import RetryQueue
from backend.llm.resilience import RetryPolicy
from backend.messages import Message, MessageType
from tests.support.clocks import FakeClock
from tests.support.polling import until
from tests.unit.bus.bus_support import msg


def wiring(
    clock: FakeClock | None = None, **breaker: float
) -> tuple[Bus, RetryQueue, AgentConsumers]:
    breakers = AgentBreakers(
        threshold=int(breaker.get("threshold", 3)),
        cooldown=breaker.get("cooldown", 0.02),
        clock=clock or time.monotonic,
    )
    bus = Bus(breakers=breakers)
    bus.register("s1", "architect")
    bus.register("s1", "librarian")
    policy = RetryPolicy(base_delay=0.002, max_delay=0.005, jitter="full", rng=random.Random(1))
    retry = RetryQueue(bus, policy=policy)
    return bus, retry, AgentConsumers(bus, retry=retry)


async def test_a_request_is_answered_by_the_handlers_reply() -> None:
    bus, retry, consumers = wiring()

    async def librarian(message: Message[Any]) -> Message[Any]:
        return message.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload="ctx")

    consumers.start("s1", "librarian", librarian)
    answer = await bus.request(msg(), timeout=1.0)
    assert answer.payload == "ctx"
    await consumers.aclose()
    await retry.aclose()


async def test_transient_failures_are_retried_until_success() -> None:
    bus, retry, consumers = wiring(threshold=10)
    retry.start()
    calls = 0

    async def flaky(message: Message[Any]) -> Message[Any]:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TransientAgentError("try again")
        return message.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload=calls)

    consumers.start("s1", "librarian", flaky)
    answer = await bus.request(msg(max_attempts=5), timeout=1.0)
    assert answer.payload == 3 and consumers.failed == 2
    await consumers.aclose()
    await retry.aclose()


async def test_a_permanent_failure_dead_letters_and_fails_the_requester() -> None:
    bus, retry, consumers = wiring()

    async def broken(message: Message[Any]) -> None:
        raise ValueError("bad input")

    consumers.start("s1", "librarian", broken)
    with pytest.raises(MessageDeadLetteredError) as info:
        await bus.request(msg(), timeout=1.0)
    entry = bus.dead_letters.get(info.value.dead_letter_id)
    assert entry.reason is DeadLetterReason.HANDLER_FAILED and "bad input" in (entry.error or "")
    await consumers.aclose()
    await retry.aclose()


async def test_repeated_failures_open_the_circuit_and_a_probe_closes_it() -> None:
    clock = FakeClock()  # the breakers' clock: the cool-down passes when the test says so
    bus, retry, consumers = wiring(clock, threshold=2, cooldown=30.0)
    healthy = False

    async def handler(message: Message[Any]) -> None:
        if not healthy:
            raise ValueError("down")

    consumers.start("s1", "librarian", handler)
    for _ in range(2):
        await bus.send(msg())
    await until(
        lambda: bus.breakers is not None and bus.breakers.state("s1", "librarian") == "open",
        what="the circuit to open",
    )
    with pytest.raises(Exception, match="unavailable"):
        await bus.send(msg())  # fail fast while cooling down
    healthy = True
    clock.advance(29.9)
    with pytest.raises(Exception, match="unavailable"):
        await bus.send(msg())  # still cooling down
    clock.advance(0.1)
    await bus.send(msg())  # cool-down over: this one is the probe
    await until(
        lambda: bus.breakers is not None and bus.breakers.state("s1", "librarian") == "closed",
        what="the probe to close the circuit",
    )
    await consumers.aclose()
    await retry.aclose()


async def test_stopping_a_consumer_mid_message_keeps_the_message() -> None:
    bus, retry, consumers = wiring()
    started = asyncio.Event()

    async def slow(message: Message[Any]) -> None:
        started.set()
        await asyncio.sleep(10)

    consumers.start("s1", "librarian", slow)
    await bus.send(msg())
    await started.wait()
    await consumers.stop("s1")
    assert consumers.running("s1") == []
    assert bus.dead_letters.entries("s1")[0].reason is DeadLetterReason.INTERRUPTED
    await retry.aclose()


async def test_the_consumer_ends_quietly_when_its_session_closes() -> None:
    bus, retry, consumers = wiring()
    health = HealthMonitor(bus, stall_after=1.0)
    consumers.health = health

    async def handler(message: Message[Any]) -> None:
        return None

    task = consumers.start("s1", "librarian", handler)
    await asyncio.sleep(0)
    bus.close_session("s1")
    await asyncio.wait_for(task, 1.0)
    assert task.exception() is None
    assert health.report("s1") == []
    bus.register("s2", "librarian")
    consumers.start("s2", "librarian", handler)
    assert [h.status for h in health.report("s2")] == [HealthStatus.HEALTHY]
    await consumers.aclose()
    await retry.aclose()
