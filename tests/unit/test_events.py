"""Any number of subscribers follow the same events, in order, losing none."""

from __future__ import annotations

import asyncio

from backend.events import EVENT_ADAPTER, EngineEvent, EngineNotice, EventStream, event_to_json


def _notice(n: int) -> EngineNotice:
    return EngineNotice(text=f"n{n}")


async def test_every_subscriber_sees_every_event_in_order() -> None:
    stream = EventStream()
    subs = [stream.subscribe() for _ in range(5)]
    heard: list[EngineEvent] = []
    stream.add_listener(heard.append)
    for n in range(100):
        stream.publish(_notice(n))
    stream.close()
    for sub in subs:
        got = [e async for e in sub]
        assert [e.text for e in got if isinstance(e, EngineNotice)] == [f"n{n}" for n in range(100)]
    assert len(heard) == 100


async def test_a_subscription_only_sees_later_events_and_can_leave() -> None:
    stream = EventStream()
    stream.publish(_notice(0))
    sub = stream.subscribe()
    stream.publish(_notice(1))
    first = await asyncio.wait_for(sub.get(), 1)
    assert isinstance(first, EngineNotice) and first.text == "n1"
    sub.close()
    stream.publish(_notice(2))
    assert stream.subscriber_count == 0
    assert [e async for e in sub] == []


def test_listener_removal() -> None:
    stream = EventStream()
    heard: list[EngineEvent] = []
    remove = stream.add_listener(heard.append)
    stream.publish(_notice(0))
    remove()
    remove()  # twice is harmless
    stream.publish(_notice(1))
    assert len(heard) == 1


def test_events_serialise_with_their_kind() -> None:
    text = event_to_json(_notice(7))
    assert '"kind":"engine.notice"' in text
    assert EVENT_ADAPTER.validate_json(text) == _notice(7).model_copy(
        update={"at": EVENT_ADAPTER.validate_json(text).at}
    )
