"""The tails of recently shown transcripts, kept current as messages arrive.

Switching back to a session seen a moment ago then needs no trip to the
archive. Entries are only ever filled from the archive and extended by
committed messages, so the cache never shows what the archive does not hold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from backend.messages import Message

EngineMessage = Message[dict[str, Any]]


def merge(loaded: Iterable[EngineMessage], later: Iterable[EngineMessage]) -> list[EngineMessage]:
    """``loaded`` followed by the messages of ``later`` it does not already hold."""
    result = list(loaded)
    seen = {m.id for m in result}
    result.extend(m for m in later if m.id not in seen)
    return result


class TranscriptCache:
    def __init__(self, *, sessions: int, messages: int) -> None:
        self.capacity = sessions
        self.limit = messages
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

    def put(self, session_id: str, messages: Iterable[EngineMessage]) -> None:
        self._tails[session_id] = list(messages)[-self.limit :]
        self._tails.move_to_end(session_id)
        while len(self._tails) > self.capacity:
            self._tails.popitem(last=False)

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
