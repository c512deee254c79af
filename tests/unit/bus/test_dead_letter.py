"""The dead-letter queue: inspect, replay, purge; bounded with a drop counter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.bus.bus import Bus
from backend.bus.dead_letter import DeadLetterQueue, DeadLetterReason, ReplayStatus
from backend.bus.errors import DeadLetterNotFoundError, MessageExpiredError
from backend.messages import MessageStatus
from tests.support.clocks import FakeWall
from tests.unit.bus.bus_support import msg


def test_entries_carry_reason_error_attempts_and_session() -> None:
    dlq = DeadLetterQueue()
    dlq.add(msg("s1", attempt=2, max_attempts=3), DeadLetterReason.MAX_ATTEMPTS, error="full")
    dlq.add(msg("s2"), DeadLetterReason.EXPIRED)
    [one] = dlq.entries("s1")
    assert (one.reason, one.error, one.attempts, one.session_id, one.agent) == (
        DeadLetterReason.MAX_ATTEMPTS,
        "full",
        2,
        "s1",
        "librarian",
    )
    assert [e.session_id for e in dlq.entries()] == ["s1", "s2"]
    assert [e.session_id for e in dlq.entries(reason=DeadLetterReason.EXPIRED)] == ["s2"]
    assert dlq.get(one.id) is one
    with pytest.raises(DeadLetterNotFoundError):
        dlq.get("dl-999")


def test_bounded_oldest_dropped_and_counted() -> None:
    dlq = DeadLetterQueue(capacity=3)
    for n in range(5):
        dlq.add(msg(payload={"n": n}), DeadLetterReason.HANDLER_FAILED)
    assert [e.message.payload["n"] for e in dlq.entries()] == [2, 3, 4]
    stats = dlq.stats()
    assert (stats.size, stats.added, stats.dropped_oldest) == (3, 5, 2)
    assert stats.by_reason == {"handler_failed": 5}


def test_purge_by_session_or_ids() -> None:
    dlq = DeadLetterQueue()
    a = dlq.add(msg("s1"), DeadLetterReason.EXPIRED)
    dlq.add(msg("s1"), DeadLetterReason.EXPIRED)
    dlq.add(msg("s2"), DeadLetterReason.EXPIRED)
    assert dlq.purge(ids=[a.id]) == 1
    assert dlq.purge("s1") == 1
    assert [e.session_id for e in dlq.entries()] == ["s2"]
    assert dlq.purge() == 1 and len(dlq) == 0 and dlq.stats().purged == 3


async def test_replay_resends_with_attempt_reset_and_fresh_life() -> None:
    wall = FakeWall()
    bus = Bus(wall_clock=wall)
    inbox = bus.register("s1", "librarian")
    original = msg(
        timestamp=wall.now, deadline=wall.now + timedelta(seconds=10), attempt=3, max_attempts=3
    )
    wall.advance(11)
    with pytest.raises(MessageExpiredError) as info:
        await bus.send(original)
    dead_id = info.value.dead_letter_id
    outcome = await bus.dead_letters.replay(dead_id)
    assert outcome.status is ReplayStatus.DELIVERED
    assert len(bus.dead_letters) == 0 and bus.dead_letters.stats().replayed == 1
    again = inbox.get_nowait()
    assert again is not None and again.id == original.id
    assert again.attempt == 0 and again.status is MessageStatus.PENDING and again.error is None
    assert again.deadline == wall.now + timedelta(seconds=10)  # same life span, from now
    assert again.metadata["replayed_from"] == dead_id


async def test_replay_that_cannot_be_sent_keeps_the_entry() -> None:
    bus = Bus()
    bus.register("s1", "librarian", capacity=1)
    entry = bus.dead_letter(msg(), DeadLetterReason.HANDLER_FAILED, error="boom")
    await bus.send(msg())  # inbox now full
    outcome = await bus.dead_letters.replay(entry.id, timeout=0)
    assert outcome.status is ReplayStatus.FAILED and "full" in (outcome.error or "")
    kept = bus.dead_letters.get(entry.id)
    assert kept.replays == 1 and "full" in (kept.error or "")


async def test_replay_into_a_closed_session_fails_cleanly() -> None:
    bus = Bus()
    bus.register("s1", "librarian")
    entry = bus.dead_letter(msg(), DeadLetterReason.HANDLER_FAILED)
    bus.close_session("s1")
    outcome = await bus.dead_letters.replay(entry.id)
    assert outcome.status is ReplayStatus.FAILED and len(bus.dead_letters) == 1


async def test_replay_that_expires_waiting_for_room_is_dead_lettered_anew() -> None:
    bus = Bus()
    bus.register("s1", "librarian", capacity=1)
    entry = bus.dead_letter(msg(ttl=timedelta(milliseconds=10)), DeadLetterReason.HANDLER_FAILED)
    await bus.send(msg())  # inbox full: the replay waits, and its fresh 10 ms run out
    outcome = await bus.dead_letters.replay(entry.id, timeout=1.0)
    assert outcome.status is ReplayStatus.DEAD_LETTERED
    assert outcome.new_dead_letter_id is not None
    assert bus.dead_letters.get(outcome.new_dead_letter_id).reason is DeadLetterReason.EXPIRED


async def test_replay_needs_a_sender() -> None:
    dlq = DeadLetterQueue()
    entry = dlq.add(msg(), DeadLetterReason.EXPIRED)
    with pytest.raises(RuntimeError):
        await dlq.replay(entry.id)


def test_the_bus_uses_the_queue_it_is_given_even_when_empty() -> None:
    from backend.bus.bus import Bus
    from backend.bus.dead_letter import DeadLetterQueue
    from backend.guide.routing.cache import RouteCache
    from backend.guide.routing.router import Router

    queue = DeadLetterQueue()
    assert len(queue) == 0  # falsy, which once made the bus build its own
    assert Bus(dead_letters=queue).dead_letters is queue
    cache = RouteCache()
    assert Router(cache=cache).cache is cache
