"""Message builders shared by the bus tests (no tests of their own).

Fake clocks and the poll-until wait live in :mod:`tests.support`."""

from __future__ import annotations

from typing import Any

from backend.messages import Message, MessageType, Priority


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
