"""The tails of recently shown transcripts, kept current as messages arrive.

Switching back to a session seen a moment ago then needs no trip to the
archive. Entries are only ever filled from the archive and extended by
committed messages, so the cache never shows what the archive does not hold.

It is bounded twice: by sessions, and by the messages all its tails hold together
(``total``), so a few long sessions do not keep as many messages in memory as two
dozen long ones would; the least recently shown go first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.messages import Message

    EngineMessage = Message[dict[str, Any]]
TOTAL_MESSAGES = 2_400
"""Messages all cached tails hold together by default: twelve sessions' 200-message tails,
or more sessions with shorter ones."""


def merge(loaded: Iterable[EngineMessage], later: Iterable[EngineMessage]) -> list[EngineMessage]:
    """``loaded`` followed by the messages of ``later`` it does not already hold."""
    result = list(loaded)
    seen = {m.id for m in result}
    result.extend(m for m in later if m.id not in seen)
    return result


class TranscriptCache:
    def __init__(self, *, sessions: int, messages: int, total: int | None = None) -> None:
        self.capacity = sessions
        self.limit = messages
        self.total = total if total is not None else min(sessions * messages, TOTAL_MESSAGES)
        """Messages every cached tail may hold together (the one just put always stays)."""
        self._held = 0
        self._tails: OrderedDict[str, list[EngineMessage]] = OrderedDict()
        self._pending: dict[str, list[EngineMessage]] = {}

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._tails

    def __len__(self) -> int:
        return len(self._tails)

    def get(self, session_id: str) -> list[EngineMessage] | None:
        tail = self._tails.get(session_id)
        if tail is not None:
            self._tails.move_to_end(session_id)
        return tail

    @property
    def held(self) -> int:
        """Messages the cached tails hold together."""
        return self._held

    def put(self, session_id: str, messages: Iterable[EngineMessage]) -> None:
        tail = list(messages)[-self.limit :]
        self._held += len(tail) - len(self._tails.get(session_id, ()))
        self._tails[session_id] = tail
        self._tails.move_to_end(session_id)
        self._evict()

    def _evict(self) -> None:
        while len(self._tails) > 1 and (
            len(self._tails) > self.capacity or self._held > self.total
        ):
            _, dropped = self._tails.popitem(last=False)
            self._held -= len(dropped)

    def loading(self, session_id: str) -> bool:
        return session_id in self._pending

    def begin(self, session_id: str) -> None:
        """A read of ``session_id`` starts: messages committed meanwhile are kept aside."""
        self._pending.setdefault(session_id, [])

    def complete(
        self, session_id: str, loaded: list[EngineMessage] | None
    ) -> list[EngineMessage] | None:
        """The read ended (``None``: it failed); returns the tail now cached."""
        later = self._pending.pop(session_id, [])
        if loaded is None:
            return None
        self.put(session_id, merge(loaded, later))
        return self._tails[session_id]

    def append(self, message: EngineMessage) -> None:
        """A message was committed: extend its session's cached tail or pending read."""
        pending = self._pending.get(message.session_id)
        if pending is not None:
            pending.append(message)
        tail = self._tails.get(message.session_id)
        if tail is None or any(m.id == message.id for m in tail[-8:]):
            return
        tail.append(message)
        if len(tail) > self.limit:
            del tail[0]
        else:
            self._held += 1
            self._evict()
