"""The Guide's bus: session isolation, back-pressure, priorities, expiry, requests."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from backend.bus.bus import Bus
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import (
    DuplicateAgentError,
    DuplicateRequestError,
    InboxClosedError,
    InboxFullError,
    MessageDeadLetteredError,
    MessageExpiredError,
    RequestTimeoutError,
    SessionClosedError,
    UnknownAgentError,
    UnknownSessionError,
)
from backend.bus.flow_log import FlowKind
from backend.messages import MessageStatus, MessageType, Priority
from tests.support.clocks import FakeClock, FakeWall
from tests.support.polling import finishes
from tests.unit.bus.bus_support import msg


def two_sessions(**kwargs: object) -> Bus:
    bus = Bus(**kwargs)  # type: ignore[arg-type]
    for session in ("s1", "s2"):
        for agent in ("architect", "librarian"):
            bus.register(session, agent)
    return bus


# -- isolation ---------------------------------------------------------------------
async def test_a_message_reaches_only_its_own_sessions_agent() -> None:
    bus = two_sessions()
    await bus.send(msg("s1", payload={"text": "one"}))
    await bus.send(msg("s2", payload={"text": "two"}))
    got1 = bus.inbox("s1", "librarian").get_nowait()
    got2 = bus.inbox("s2", "librarian").get_nowait()
    assert got1 is not None and got1.payload == {"text": "one"}
    assert got2 is not None and got2.payload == {"text": "two"}
    assert bus.inbox("s1", "librarian").get_nowait() is None


async def test_an_agent_of_another_session_is_unknown_here() -> None:
    bus = Bus()
    bus.register("s1", "librarian")
    bus.register("s2", "academic")
    with pytest.raises(UnknownAgentError) as info:
        await bus.send(msg("s1", "academic"))
    assert info.value.session_id == "s1" and info.value.agent == "academic"
    assert "academic" in str(info.value) and "s1" in str(info.value)
    with pytest.raises(UnknownSessionError):
        await bus.send(msg("nope", "librarian"))
    with pytest.raises(UnknownAgentError):
        await bus.send(msg("s1", None))


async def test_a_reply_cannot_resolve_another_sessions_request() -> None:
    bus = two_sessions()
    request = msg("s1")
    waiting = asyncio.create_task(bus.request(request, timeout=1.0))
    await asyncio.sleep(0)
    # Same correlation id, but sent in s2: it must not cross over.
    forged = request.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload="x")
    forged.session_id = "s2"
    assert await bus.respond(forged) is False
    assert not waiting.done()
    assert bus.inbox("s2", "architect").qsize() == 1  # delivered in s2 as a plain message
    real = request.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload="ok")
    assert await bus.respond(real) is True
    assert (await waiting).payload == "ok"


async def test_queries_answer_for_one_session_only() -> None:
    bus = two_sessions()
    await bus.send(msg("s1"))
    await bus.send(msg("s1"))
    await bus.send(msg("s2"))
    assert bus.stats("s1").queued == 2
    assert bus.stats("s2").queued == 1
    assert {f.session_id for f in bus.flow_log.recent("s2")} == {"s2"}
    assert bus.agents("s2") == ["architect", "librarian"]


async def test_registering_twice_is_refused() -> None:
    bus = Bus()
    bus.register("s1", "librarian")
    with pytest.raises(DuplicateAgentError):
        bus.register("s1", "librarian")
    bus.register("s2", "librarian")  # the same name in another session is another agent


# -- back-pressure -----------------------------------------------------------------
async def test_a_full_inbox_makes_the_sender_wait_then_fail_typed() -> None:
    bus = Bus()
    bus.register("s1", "librarian", capacity=2)
    await bus.send(msg())
    await bus.send(msg())
    third = msg(payload={"text": "third"})
    with pytest.raises(InboxFullError) as info:
        await bus.send(third, timeout=0.02)
    assert info.value.waited > 0 and info.value.capacity == 2  # it waited for room first
    with pytest.raises(InboxFullError) as at_once:
        await bus.send(third, timeout=0)
    assert at_once.value.waited == 0  # no timeout: no wait
    # Nothing was lost or half-queued: the two accepted messages, and only they, remain.
    assert bus.inbox("s1", "librarian").qsize() == 2
    assert len(bus.dead_letters) == 0


async def test_a_waiting_sender_gets_in_when_the_consumer_drains() -> None:
    bus = Bus()
    inbox = bus.register("s1", "librarian", capacity=1)
    await bus.send(msg(payload={"text": "a"}))
    sender = asyncio.create_task(bus.send(msg(payload={"text": "b"}), timeout=1.0))
    await asyncio.sleep(0)
    assert not sender.done() and inbox.waiting_senders == 1
    first = await inbox.get()
    await sender
    second = await inbox.get()
    assert [first.payload["text"], second.payload["text"]] == ["a", "b"]


async def test_many_blocked_senders_all_get_through_in_order() -> None:
    bus = Bus()
    inbox = bus.register("s1", "librarian", capacity=1)
    senders = [asyncio.create_task(bus.send(msg(payload={"n": n}), timeout=1.0)) for n in range(20)]
    got = [(await inbox.get()).payload["n"] for _ in range(20)]
    await asyncio.gather(*senders)
    assert got == list(range(20))


async def test_a_cancelled_consumer_passes_its_wake_up_on() -> None:
    bus = Bus()
    inbox = bus.register("s1", "librarian")
    first = asyncio.create_task(inbox.get())
    second = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    await bus.send(msg())  # wakes the first consumer...
    first.cancel()  # ...which is cancelled before it can take the message
    got = await asyncio.wait_for(second, 1.0)
    assert got.target == "librarian" and first.cancelled()


# -- priorities --------------------------------------------------------------------
async def test_higher_priority_first_fifo_within_a_priority() -> None:
    bus = Bus()
    inbox = bus.register("s1", "librarian")
    order = [
        (Priority.LOW, "l1"),
        (Priority.NORMAL, "n1"),
        (Priority.CRITICAL, "c1"),
        (Priority.NORMAL, "n2"),
        (Priority.HIGH, "h1"),
        (Priority.CRITICAL, "c2"),
        (Priority.LOW, "l2"),
    ]
    for priority, name in order:
        await bus.send(msg(priority=priority, payload={"n": name}))
    got = [(await inbox.get()).payload["n"] for _ in order]
    assert got == ["c1", "c2", "h1", "n1", "n2", "l1", "l2"]


# -- expiry ------------------------------------------------------------------------
async def test_an_expired_message_is_dead_lettered_not_delivered() -> None:
    wall = FakeWall()
    bus = Bus(wall_clock=wall)
    bus.register("s1", "librarian")
    stale = msg(timestamp=wall.now, ttl=timedelta(seconds=5))
    wall.advance(6)
    with pytest.raises(MessageExpiredError) as info:
        await bus.send(stale)
    entry = bus.dead_letters.get(info.value.dead_letter_id)
    assert entry.reason is DeadLetterReason.EXPIRED and entry.session_id == "s1"
    assert stale.status is MessageStatus.DEAD_LETTERED
    assert bus.inbox("s1", "librarian").qsize() == 0


async def test_a_message_that_expires_while_queued_is_skipped() -> None:
    wall = FakeWall()
    bus = Bus(wall_clock=wall)
    inbox = bus.register("s1", "librarian")
    await bus.send(msg(timestamp=wall.now, deadline=wall.now + timedelta(seconds=1)))
    await bus.send(msg(timestamp=wall.now, payload={"text": "fresh"}))
    wall.advance(2)
    got = await inbox.get()
    assert got.payload == {"text": "fresh"}
    [entry] = bus.dead_letters.entries("s1")
    assert entry.reason is DeadLetterReason.EXPIRED and entry.agent == "librarian"


async def test_sweep_dead_letters_expired_messages_nobody_drains() -> None:
    wall = FakeWall()
    bus = Bus(wall_clock=wall)
    bus.register("s1", "librarian")
    await bus.send(msg(timestamp=wall.now, ttl=timedelta(seconds=1)))
    await bus.send(msg(timestamp=wall.now))
    wall.advance(2)
    assert bus.sweep_expired() == 1
    assert bus.inbox("s1", "librarian").qsize() == 1


async def test_a_sender_waiting_past_the_deadline_gets_expired_not_full() -> None:
    bus = Bus()
    bus.register("s1", "librarian", capacity=1)
    await bus.send(msg())
    short = msg(ttl=timedelta(milliseconds=20))
    with pytest.raises(MessageExpiredError):
        await bus.send(short, timeout=5.0)
    assert bus.dead_letters.entries("s1")[0].message is short


# -- request / response ------------------------------------------------------------
async def test_request_gets_the_correlated_reply() -> None:
    bus = two_sessions()
    request = msg()

    async def librarian() -> None:
        got = await bus.inbox("s1", "librarian").get()
        reply = got.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload="ctx")
        assert await bus.respond(reply) is True

    helper = asyncio.create_task(librarian())
    answer = await bus.request(request, timeout=1.0)
    await helper
    assert answer.payload == "ctx" and answer.correlation_id == request.id
    assert request.correlation_id == request.id
    assert bus.pending_requests("s1") == 0
    [flow] = bus.flow_log.recent("s1", kind=FlowKind.RESPOND)
    assert flow.correlation_id == request.id


async def test_a_reply_sent_with_send_also_resolves_the_request() -> None:
    bus = two_sessions()
    request = msg(correlation_id="conv-7")
    waiting = asyncio.create_task(bus.request(request, timeout=1.0))
    await asyncio.sleep(0)
    got = bus.inbox("s1", "librarian").get_nowait()
    assert got is request
    await bus.send(got.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload=1))
    assert (await waiting).correlation_id == "conv-7"
    assert bus.inbox("s1", "architect").qsize() == 0  # consumed by the request, not queued


async def test_a_reply_to_someone_else_does_not_resolve_it() -> None:
    bus = two_sessions()
    request = msg()
    waiting = asyncio.create_task(bus.request(request, timeout=1.0))
    await asyncio.sleep(0)
    other = request.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload=0)
    other.target = "librarian"  # same correlation, but not addressed to the requester
    await bus.send(other)
    assert not waiting.done()
    await bus.respond(request.reply(source="librarian", type=MessageType.AGENT_REPLY, payload=1))
    assert (await waiting).payload == 1


async def test_request_times_out_typed() -> None:
    bus = two_sessions()
    with pytest.raises(RequestTimeoutError) as info:
        await bus.request(msg(), timeout=0.02)
    assert info.value.agent == "librarian" and info.value.session_id == "s1"
    assert bus.pending_requests("s1") == 0


async def test_the_envelope_deadline_bounds_the_request() -> None:
    bus = two_sessions()
    with pytest.raises(RequestTimeoutError) as info:  # nobody answers: only a bound ends it
        await finishes(
            bus.request(msg(ttl=timedelta(milliseconds=30)), timeout=3600.0),
            what="the envelope's deadline",
        )
    assert info.value.after <= 0.03  # the envelope's budget, not the hour asked for


async def test_a_late_reply_is_delivered_to_the_requesters_inbox() -> None:
    bus = two_sessions()
    request = msg()
    with pytest.raises(RequestTimeoutError):
        await bus.request(request, timeout=0.01)
    late = request.reply(source="librarian", type=MessageType.CONTEXT_RESPONSE, payload="late")
    assert await bus.respond(late) is False
    assert bus.inbox("s1", "architect").get_nowait() is late


async def test_duplicate_pending_correlation_is_refused() -> None:
    bus = two_sessions()
    first = asyncio.create_task(bus.request(msg(correlation_id="c"), timeout=1.0))
    await asyncio.sleep(0)
    with pytest.raises(DuplicateRequestError):
        await bus.request(msg(correlation_id="c"), timeout=1.0)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    assert bus.pending_requests("s1") == 0


async def test_a_dead_lettered_request_fails_its_requester_at_once() -> None:
    bus = two_sessions()
    request = msg()
    waiting = asyncio.create_task(bus.request(request, timeout=5.0))
    await asyncio.sleep(0)
    bus.dead_letter(request, DeadLetterReason.HANDLER_FAILED, error="boom")
    with pytest.raises(MessageDeadLetteredError) as info:
        await waiting
    assert info.value.reason == "handler_failed" and "boom" in str(info.value)


# -- closing -----------------------------------------------------------------------
async def test_close_session_fails_pending_requests_and_waiters() -> None:
    bus = two_sessions()
    full = bus.register("s1", "tester", capacity=1)
    await bus.send(msg(target="tester"))
    requester = asyncio.create_task(bus.request(msg(), timeout=5.0))
    blocked_sender = asyncio.create_task(bus.send(msg(target="tester"), timeout=5.0))
    consumer = asyncio.create_task(bus.inbox("s1", "architect").get())
    await asyncio.sleep(0)
    assert full.waiting_senders == 1
    dead = bus.close_session("s1")
    for task in (requester, blocked_sender, consumer):
        with pytest.raises(SessionClosedError):
            await task
    # The queued tester message and the delivered-but-unread request are kept, not lost.
    assert dead == 2
    reasons = {e.reason for e in bus.dead_letters.entries("s1")}
    assert reasons == {DeadLetterReason.SESSION_CLOSED}
    with pytest.raises(UnknownSessionError):
        await bus.send(msg("s1"))
    # The other session is untouched.
    await bus.send(msg("s2"))
    assert bus.stats("s2").queued == 1
    assert bus.close_session("s1") == 0


async def test_unregister_closes_the_inbox_and_keeps_its_messages() -> None:
    bus = two_sessions()
    await bus.send(msg())
    consumer = asyncio.create_task(bus.inbox("s1", "architect").get())
    await asyncio.sleep(0)
    assert bus.unregister("s1", "librarian") == 1
    assert bus.unregister("s1", "architect") == 0
    with pytest.raises(InboxClosedError):
        await consumer
    [entry] = bus.dead_letters.entries("s1")
    assert entry.reason is DeadLetterReason.AGENT_UNREGISTERED
    with pytest.raises(UnknownAgentError):
        await bus.send(msg())


async def test_flow_log_records_send_and_deliver_latency() -> None:
    clock = FakeClock()
    bus = Bus(clock=clock)
    inbox = bus.register("s1", "librarian")
    await bus.send(msg())
    clock.advance(0.25)
    await inbox.get()
    [deliver] = bus.flow_log.recent("s1", kind=FlowKind.DELIVER)
    assert deliver.latency_us == pytest.approx(250_000)
    stats = bus.flow_log.snapshot()
    assert stats.flows["send"].count == 1 and stats.flows["deliver"].p50_us == pytest.approx(
        250_000
    )
