"""Answers still being written: the text an agent has streamed so far, per session.

Steps arrive as engine events; the recorded answer arrives a moment later as a
transcript message. When the turn ends the draft stays on screen, no longer
"answering", until that message replaces it, so the answer never blinks out.
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
        self._ended: set[str] = set()  # turn over, recorded answer not shown yet

    def step(self, session_id: str, role: str, kind: str, text: str) -> None:
        if kind in TURN_ENDS:
            if session_id in self._drafts:
                self._ended.add(session_id)
            return
        if session_id in self._ended:  # a new turn begins
            self._ended.discard(session_id)
            self._drafts.pop(session_id, None)
        _, so_far, _ = self._drafts.get(session_id, (role, "", ""))
        doing = {"tool_call": "using a tool", "retry": "retrying"}.get(kind, "")
        self._drafts[session_id] = (role, so_far + text, doing)

    def answered(self, message: EngineMessage) -> bool:
        """A recorded message replaces a finished draft; True when one was dropped."""
        sid = message.session_id
        if sid in self._ended and message.type is not MessageType.USER_INPUT:
            self._ended.discard(sid)
            self._drafts.pop(sid, None)
            return True
        return False

    def working(self, session_id: str | None) -> str | None:
        """Who is answering in ``session_id`` (``None``: nobody)."""
        sid = session_id or ""
        draft = self._drafts.get(sid)
        return draft[0] if draft and sid not in self._ended else None

    def message(self, session_id: str | None) -> EngineMessage | None:
        """The draft as a transcript message, for display only."""
        draft = self._drafts.get(session_id or "")
        if draft is None or session_id is None:
            return None
        role, text, doing = draft
        tail = "" if session_id in self._ended else f" … ({doing})" if doing else " …"
        return EngineMessage(
            id=f"draft-{session_id}",
            session_id=session_id,
            source=role,
            type=MessageType.AGENT_REPLY,
            payload={"text": (text + tail).lstrip()},
            timestamp=self._clock(),
        )
