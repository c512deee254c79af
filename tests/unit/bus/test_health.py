"""Health monitoring: stalled and crashed agents are reported, not waited on."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from backend.bus.breakers import AgentBreakers
from backend.bus.bus import Bus
from backend.bus.errors import MessageDeadLetteredError
from backend.bus.health import AgentHealth, HealthMonitor, HealthStatus
from tests.support.clocks import FakeClock, FakeWall
from tests.support.polling import until
from tests.unit.bus.bus_support import msg


def monitored(
    stall_after: float = 5.0,
) -> tuple[Bus, HealthMonitor, FakeClock, list[tuple[AgentHealth, HealthStatus]]]:
    clock = FakeClock()
    bus = Bus(clock=clock, breakers=AgentBreakers(clock=clock))
    bus.register("s1", "librarian")
    bus.register("s1", "academic")
    changes: list[tuple[AgentHealth, HealthStatus]] = []
    monitor = HealthMonitor(
        bus, stall_after=stall_after, on_change=lambda h, prev: changes.append((h, prev))
    )
    return bus, monitor, clock, changes


async def test_an_agent_that_stops_draining_is_stalled_after_the_threshold() -> None:
    bus, monitor, clock, changes = monitored()
    await bus.send(msg())
    clock.advance(5.0)
    assert monitor.check() == []  # exactly at the threshold: not yet
    clock.advance(0.1)
    [changed] = monitor.check()
    assert changed.status is HealthStatus.STALLED and changed.agent == "librarian"
    assert changed.queue_depth == 1 and changed.stalled_for == pytest.approx(5.1)
    assert changes[0][1] is HealthStatus.HEALTHY
    assert monitor.check() == []  # no repeated notification
    # The consumer drains: healthy again.
    bus.inbox("s1", "librarian").get_nowait()
    [recovered] = monitor.check()
    assert recovered.status is HealthStatus.HEALTHY and recovered.last_drain_age == 0


async def test_a_long_idle_agent_that_just_got_mail_is_not_stalled() -> None:
    bus, monitor, clock, _ = monitored()
    clock.advance(3600)
    await bus.send(msg())
    clock.advance(1)
    [lib] = [h for h in monitor.report("s1") if h.agent == "librarian"]
    assert lib.status is HealthStatus.HEALTHY
    assert lib.last_drain_age == pytest.approx(3601) and lib.stalled_for == pytest.approx(1)


async def test_a_busy_agent_draining_steadily_stays_healthy() -> None:
    bus, monitor, clock, _ = monitored()
    inbox = bus.inbox("s1", "librarian")
    for _ in range(10):
        await bus.send(msg())
        await bus.send(msg())
        clock.advance(4.0)
        inbox.get_nowait()
        assert monitor.check() == []
    assert inbox.qsize() == 10


async def test_a_crashed_consumer_is_reported_with_its_exception() -> None:
    bus, monitor, _, changes = monitored()

    async def consumer() -> None:
        await bus.inbox("s1", "academic").get()
        raise RuntimeError("handler bug")

    task = asyncio.create_task(consumer())
    monitor.watch("s1", "academic", task)
    await bus.send(msg(target="academic"))
    await asyncio.gather(task, return_exceptions=True)
    [crashed] = monitor.check()
    assert crashed.status is HealthStatus.CRASHED and crashed.agent == "academic"
    assert isinstance(crashed.error, RuntimeError) and str(crashed.error) == "handler bug"
    assert changes[-1][0] is crashed


async def test_a_consumer_that_ended_is_reported_stopped() -> None:
    _, monitor, _, _ = monitored()
    task = asyncio.create_task(asyncio.sleep(0))
    monitor.watch("s1", "academic", task)
    await task
    statuses = {h.agent: h.status for h in monitor.report()}
    assert statuses == {"librarian": HealthStatus.HEALTHY, "academic": HealthStatus.STOPPED}


async def test_report_is_per_session_and_shows_the_circuit() -> None:
    bus, monitor, _, _ = monitored()
    bus.register("s2", "librarian")
    assert bus.breakers is not None
    b = bus.breakers.get("s2", "librarian")
    for _ in range(5):
        b.record_failure(b.acquire())
    [only] = monitor.report("s2")
    assert only.session_id == "s2" and only.circuit == "open"
    assert {h.circuit for h in monitor.report("s1")} == {"closed"}
    assert monitor.report("gone") == []


async def test_the_check_dead_letters_expired_messages_of_a_stuck_agent() -> None:
    wall = FakeWall()
    bus = Bus(wall_clock=wall)
    bus.register("s1", "librarian")
    monitor = HealthMonitor(bus, stall_after=60)
    waiting = asyncio.create_task(bus.request(msg(timestamp=wall.now, ttl=timedelta(seconds=1))))
    await asyncio.sleep(0)
    wall.advance(2)
    monitor.check()
    with pytest.raises(MessageDeadLetteredError):
        await waiting


class CountingMonitor(HealthMonitor):
    """Counts the periodic task's checks, so a test can speak of "the next check"."""

    checks = 0

    def check(self) -> list[AgentHealth]:
        self.checks += 1
        return super().check()


async def test_the_periodic_task_reports_a_stall_on_its_first_check_past_the_threshold() -> None:
    clock = FakeClock()
    bus = Bus(clock=clock)
    inbox = bus.register("s1", "librarian")
    seen: list[tuple[HealthStatus, int]] = []

    def on_change(health: AgentHealth, previous: HealthStatus) -> None:
        seen.append((health.status, monitor.checks))

    monitor = CountingMonitor(bus, stall_after=30.0, interval=0.001, on_change=on_change)
    monitor.start()
    await bus.send(msg())  # and nobody drains it
    clock.advance(30.0)  # at the threshold, not past it
    at_threshold = monitor.checks
    await until(lambda: monitor.checks >= at_threshold + 2, what="two checks at the threshold")
    assert seen == []
    clock.advance(0.001)
    past = monitor.checks
    await until(lambda: len(seen) >= 1, what="the stall to be reported")
    assert seen == [(HealthStatus.STALLED, past + 1)]  # the very next check saw it
    inbox.get_nowait()
    await until(lambda: len(seen) >= 2, what="the recovery to be reported")
    assert [status for status, _ in seen] == [HealthStatus.STALLED, HealthStatus.HEALTHY]
    await monitor.aclose()


async def test_a_failing_listener_does_not_stop_monitoring() -> None:
    clock = FakeClock()
    bus = Bus(clock=clock)
    bus.register("s1", "librarian")

    def explode(health: AgentHealth, previous: HealthStatus) -> None:
        raise RuntimeError("listener bug")

    monitor = HealthMonitor(bus, stall_after=1, on_change=explode)
    await bus.send(msg())
    clock.advance(2)
    assert [h.status for h in monitor.check()] == [HealthStatus.STALLED]


async def test_a_handler_stuck_on_one_message_is_stalled_with_nothing_queued() -> None:
    clock = FakeClock()
    bus = Bus(clock=clock)
    inbox = bus.register("s", "architect")
    monitor = HealthMonitor(bus, stall_after=5.0, clock=clock)
    inbox.busy_since = clock()
    clock.advance(6.0)
    (health,) = monitor.report("s")
    assert health.status is HealthStatus.STALLED and health.queue_depth == 0
    inbox.busy_since = None
    (health,) = monitor.report("s")
    assert health.status is HealthStatus.HEALTHY
