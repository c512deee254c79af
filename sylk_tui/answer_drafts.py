"""Answers still being written: the text an agent has streamed so far, per session.

Steps arrive as engine events; the final answer arrives later as a transcript
message, and the draft is dropped when the turn ends.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from backend.messages import Message, MessageType

TURN_ENDS = frozenset({"final", "interrupted", "step_limit", "cancelled", "error"})
EngineMessage = Message[dict[str, Any]]


class AnswerDrafts:
    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._drafts: dict[str, tuple[str, str, str]] = {}  # session -> role, text, doing

    def step(self, session_id: str, role: str, kind: str, text: str) -> None:
        if kind in TURN_ENDS:
            self._drafts.pop(session_id, None)
            return
        _, so_far, _ = self._drafts.get(session_id, (role, "", ""))
        doing = {"tool_call": "using a tool", "retry": "retrying"}.get(kind, "")
        self._drafts[session_id] = (role, so_far + text, doing)

    def working(self, session_id: str | None) -> str | None:
        """Who is answering in ``session_id`` (``None``: nobody)."""
        draft = self._drafts.get(session_id or "")
        return draft[0] if draft else None

    def message(self, session_id: str | None) -> EngineMessage | None:
        """The draft as a transcript message, for display only."""
        draft = self._drafts.get(session_id or "")
        if draft is None or session_id is None:
            return None
        role, text, doing = draft
        tail = f" … ({doing})" if doing else " …"
        return EngineMessage(
            id=f"draft-{session_id}",
            session_id=session_id,
            source=role,
            type=MessageType.AGENT_REPLY,
            payload={"text": (text + tail).lstrip()},
            timestamp=self._clock(),
        )
