"""What the user sent, per session, and where ↑/↓ stand in it.

A session's history starts from the lines its transcript shows the user typed (the
archive keeps them, so it survives a restart) and grows with each line recorded. Walking
back keeps what was being typed, and walking past the newest line brings it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from backend.message_types import MessageType

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.messages import Message

HISTORY_LIMIT = 500
"""Lines kept per session (the oldest go first)."""


class ComposerHistory:
    def __init__(self, limit: int = HISTORY_LIMIT) -> None:
        self._limit = limit
        self._lines: dict[str, list[str]] = {}
        self._session: str | None = None
        self._position = 0
        self._typed = ""

    def known(self, session_id: str) -> bool:
        return session_id in self._lines

    def seed(self, session_id: str, sent: Iterable[str]) -> None:
        """Start ``session_id``'s history from its transcript, unless it has one already."""
        if session_id not in self._lines:
            lines: list[str] = []
            for text in sent:
                if text.strip() and (not lines or lines[-1] != text):
                    lines.append(text)
            self._lines[session_id] = lines[-self._limit :]
        if session_id == self._session:
            self._position = len(self._lines[session_id])

    def begin(self, session_id: str | None) -> None:
        """Walk ``session_id``'s history from its newest end."""
        self._session = session_id
        self._position = len(self.lines(session_id))
        self._typed = ""

    def lines(self, session_id: str | None) -> list[str]:
        return self._lines.get(session_id or "", [])

    def add(self, session_id: str, text: str) -> None:
        lines = self._lines.setdefault(session_id, [])
        if not lines or lines[-1] != text:
            lines.append(text)
            del lines[: -self._limit]
        if session_id == self._session:
            self._position = len(lines)
            self._typed = ""

    def step(self, current: str, step: int) -> str | None:
        """The text to show after one step back (-1) or forward (1); None: nowhere to go."""
        lines = self.lines(self._session)
        if not lines:
            return None
        if self._position >= len(lines):
            self._typed = current
        position = max(0, min(len(lines), self._position + step))
        if position == self._position:
            return None
        self._position = position
        return self._typed if position == len(lines) else lines[position]


def sent_lines(messages: Iterable[Message[dict[str, Any]]]) -> Iterator[str]:
    """The lines the user typed, oldest first, among a transcript's messages (read only
    when a session's history starts, so a switch to a known session costs nothing)."""
    return (str(m.payload.get("text", "")) for m in messages if m.type is MessageType.USER_INPUT)
