"""A transcript that keeps at most about a thousand messages, however long it runs.

Every message shown keeps its drawn block (dozens of objects each): 100,000 lines
streamed into the session on screen grew the app by 170 MiB (``benchmarks/tui_bench.py
--only memory``). Appending past :data:`KEPT_MESSAGES` drops the oldest from the top, a
batch at a time, with the view held where it is; the archive still holds them, and
scrolling to the top reads them back through the older-history path
(``Transcript.OlderWanted``). What the user is reading is never dropped: while the view
is on the oldest messages the transcript waits to trim until it moves on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from widgets.transcript.layout import TranscriptLayout

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from widgets.transcript.blocks import EngineMessage

KEPT_MESSAGES = 1_000
"""Messages the transcript holds after a trim."""
TRIM_BATCH = 100
"""Messages appended past :data:`KEPT_MESSAGES` before the oldest are dropped: a trim
re-indexes every line, so it is done once per batch, not on every message."""
OLDER_SHOWN_ON_SCROLL = "↑ older messages load as you scroll up"
"""The line above the messages once older ones were dropped (the screen's own wording
replaces it when older messages are read back)."""


class TrimmedLayout(TranscriptLayout):
    """:class:`TranscriptLayout` that drops its oldest messages past a bound."""

    kept_messages = KEPT_MESSAGES
    trim_batch = TRIM_BATCH

    def append(self, message: EngineMessage) -> None:
        super().append(message)
        if len(self._messages) >= self.kept_messages + self.trim_batch:
            self.trim()

    def trim(self) -> int:
        """Drop the oldest messages beyond :attr:`kept_messages`; how many were dropped
        (none while the view is on them)."""
        count = len(self._messages) - self.kept_messages
        if count <= 0:
            return 0
        anchor = self._anchor()
        if anchor is not None and anchor[0] < count:
            return 0  # the user reads what would go: trim once the view moves on
        dropped, self._messages = self._messages[:count], self._messages[count:]
        self._forget(dropped)
        self.more_above = True
        self._asked_before = None
        self.header = self.header or OLDER_SHOWN_ON_SCROLL
        if self._width:
            del self._blocks[:count], self._heights[:count]
            self._first_exact = max(0, self._first_exact - count)
            if self._blocks and self._blocks[0] is not None:
                # The new first message has no previous one: it opens with its day's rule.
                block = self._block_at(self._messages, 0, self._width)
                self._blocks[0], self._heights[0] = block, len(block)
        else:
            self._blocks, self._heights = [], []
        self._reindex()
        self._restore(None if anchor is None else (anchor[0] - count, anchor[1]))
        self.refresh()
        return count

    def drawn_ids(self) -> set[str]:
        """The messages a drawn block is kept for (at any width)."""
        return {key[0] for key in self._cache.keys()}  # noqa: SIM118 - not iterable itself

    def _forget(self, dropped: list[EngineMessage]) -> None:
        """Free what the transcript kept for ``dropped``: ids, fold state, drawn blocks."""
        gone = {m.id for m in dropped}
        self._ids -= gone
        for message_id in gone:
            self.folds.forget(message_id)
        cached = self._cache.keys()  # an LRUCache is not iterable itself
        for key in [key for key in cached if key[0] in gone]:
            self._cache.discard(key)
