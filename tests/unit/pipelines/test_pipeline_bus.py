"""The pipeline-internal bus: engineer <-> inspector <-> tester, scoped to one pipeline."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from backend.bus.errors import InboxFullError, MessageExpiredError
from backend.messages import MessageType, Priority
from backend.pipelines.bus import (
    InMemoryPipelineBus,
    PipelineBus,
    PipelineClosedError,
    PipelineRole,
    PipelineRouteError,
    PipelineTimeoutError,
)
from tests.unit.bus.bus_support import msg


def pipeline(**kwargs: float) -> InMemoryPipelineBus:
    return InMemoryPipelineBus("p1", "s1", **kwargs)  # type: ignore[arg-type]


def test_it_satisfies_the_protocol() -> None:
    assert isinstance(pipeline(), PipelineBus)


async def test_feedback_goes_to_the_engineer_and_results_to_control() -> None:
    bus = pipeline()
    await bus.send_inspector_feedback({"issues": ["unused import"]})
    await bus.send_tester_feedback({"failed": ["test_login"]})
    first = await bus.receive(PipelineRole.ENGINEER, timeout=0.1)
    second = await bus.receive(PipelineRole.ENGINEER, timeout=0.1)
    assert (first.type, second.type) == (
        MessageType.INSPECTOR_FEEDBACK,
        MessageType.TESTER_FEEDBACK,
    )
    assert first.metadata["pipeline_id"] == "p1" and first.session_id == "s1"
    await bus.complete({"files": ["auth.py"]})
    done = await bus.receive(PipelineRole.CONTROL, timeout=0.1)
    assert done.type is MessageType.PIPELINE_COMPLETE


async def test_other_types_go_to_the_named_role() -> None:
    bus = pipeline()
    ready = msg("s1", "inspector", source="engineer", type=MessageType.INSPECTION_REQUEST)
    await bus.send(ready)
    assert await bus.receive(PipelineRole.INSPECTOR, timeout=0.1) is ready
    with pytest.raises(PipelineRouteError):
        await bus.send(msg("s1", "librarian", type=MessageType.CONTEXT_REQUEST))


async def test_another_sessions_message_is_refused() -> None:
    bus = pipeline()
    with pytest.raises(PipelineRouteError):
        await bus.send(msg("s2", "engineer", type=MessageType.INSPECTOR_FEEDBACK))


async def test_a_failure_overtakes_queued_feedback_for_control() -> None:
    bus = pipeline()
    await bus.complete({"partial": True})
    await bus.fail("tests never pass")
    first = await bus.receive(PipelineRole.CONTROL, timeout=0.1)
    assert first.type is MessageType.PIPELINE_FAILED and first.priority is Priority.HIGH


async def test_back_pressure_and_receive_timeout_are_typed() -> None:
    bus = pipeline(feedback_capacity=1)
    await bus.send_inspector_feedback("one")
    with pytest.raises(InboxFullError):
        await bus.send(msg("s1", "engineer", type=MessageType.INSPECTOR_FEEDBACK), timeout=0.01)
    assert bus.pending(PipelineRole.ENGINEER) == 1
    with pytest.raises(PipelineTimeoutError):
        await bus.receive(PipelineRole.TESTER, timeout=0.01)


async def test_expired_messages_are_kept_not_delivered() -> None:
    bus = pipeline()
    stale = msg("s1", "engineer", type=MessageType.TESTER_FEEDBACK, ttl=timedelta(seconds=1))
    stale.timestamp -= timedelta(seconds=5)
    with pytest.raises(MessageExpiredError):
        await bus.send(stale)
    assert bus.dead_letters.entries()[0].message is stale


async def test_close_wakes_receivers_and_refuses_sends() -> None:
    bus = pipeline()
    await bus.send_tester_feedback("unread")
    waiting = asyncio.create_task(bus.receive(PipelineRole.CONTROL, timeout=1.0))
    await asyncio.sleep(0)
    left = bus.close()
    assert [m.payload for m in left] == ["unread"] and len(bus.dead_letters) == 1
    with pytest.raises(PipelineClosedError):
        await waiting
    with pytest.raises(PipelineClosedError):
        await bus.send_inspector_feedback("late")
    assert bus.closed and bus.close() == []
