"""Fake clocks and message builders shared by the bus tests (no tests of its own)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from backend.messages import Message, MessageType, Priority

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    """A monotonic clock that only moves when told."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeWall:
    """A UTC wall clock that only moves when told."""

    def __init__(self, start: datetime = EPOCH) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def msg(
    session: str = "s1",
    target: str | None = "librarian",
    *,
    source: str = "architect",
    type: MessageType = MessageType.CONTEXT_REQUEST,
    payload: Any = None,
    priority: Priority = Priority.NORMAL,
    **fields: Any,
) -> Message[Any]:
    return Message[Any](
        session_id=session,
        source=source,
        target=target,
        type=type,
        payload=payload if payload is not None else {"text": "hi"},
        priority=priority,
        **fields,
    )


async def until(condition: Callable[[], bool], limit: float = 1.0) -> None:
    """Poll ``condition`` every millisecond; fail the test after ``limit`` seconds."""
    async with asyncio.timeout(limit):
        while True:
            if condition():
                return
            await asyncio.sleep(0.001)
