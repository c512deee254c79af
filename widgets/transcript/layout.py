"""The transcript of the session on screen, drawn with Textual's line API.

Showing a session lays out only what the screen needs: the newest messages are wrapped
at once (bottom up, until two screens are full), older ones get an estimated height and
are wrapped a chunk per frame afterwards, keeping the view still. Blocks are cached per
message and width, so coming back to a session, or appending a message, costs only what
is new. An answer's tool calls are blocks within it (``tool_blocks``); which are unfolded
and which is selected lives in :class:`~widgets.transcript.folds.ActionFolds` and is part
of a block's cache key, so folding one re-wraps only its message.

Only what is on screen is painted (the line API asks for those lines). A session holding
more than was read shows its newest messages; scrolling to the top asks for older ones
(``Transcript.OlderWanted``), which :meth:`prepend` adds above with the view held still.

Answers are Markdown (``markdown_render``): a stored message is drawn once per width and
kept with its block; the draft streaming in keeps its finished Markdown blocks in its own
renderer, its folded lines and its unchanged strips, so each repaint draws only its tail.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterable
from datetime import tzinfo
from functools import partial
from itertools import accumulate
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from widgets.transcript.blocks import StripReuse, block_key, estimate_height, render_block
from widgets.transcript.folds import ActionFolds
from widgets.transcript.markdown_render import MarkdownRenderer

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from widgets.transcript.blocks import EngineMessage

CHUNK = 100
"""Older messages wrapped per step once the newest are on screen."""
CHUNK_LINES = 800
"""And at most about this many lines per step: answers with unfolded tool blocks (a
diff, a command's output) run to dozens of lines each, and every line costs."""
WRAP_OLDER_DELAY = 0.05
"""Seconds after a session is shown before its older messages are wrapped."""
BLOCK_CACHE_ENTRIES = 1024
"""Messages' drawn blocks kept (per width): about five sessions' whole tails. Each block
is dozens of objects; at 16,384 flipping through sessions grew RSS by ~2 MiB a switch
and every full garbage collection walked them all (see benchmarks/tui_bench.py)."""
DRAFT_BLOCKS_KEPT = 256
"""Finished Markdown blocks of the streaming answer kept drawn (per width)."""


class TranscriptLayout(ScrollView):
    """Lays out and paints the messages of one session (the widget is :class:`Transcript`)."""

    def __init__(
        self,
        *,
        tz: tzinfo | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.tz = tz
        """Time zone of the timestamps shown (``None``: the machine's local zone)."""
        self.session_id: str | None = None
        self.placeholder = ""
        self.header = ""
        self._messages: list[EngineMessage] = []
        self._ids: set[str] = set()
        self._blocks: list[list[Strip] | None] = []
        self._heights: list[int] = []
        self._starts: list[int] = []
        self._height = 0
        self._width = 0
        self._first_exact = 0
        self._generation = 0
        self._cache: LRUCache[tuple[str, int, str, Hashable], list[Strip]] = LRUCache(
            BLOCK_CACHE_ENTRIES
        )
        self._draft: EngineMessage | None = None
        self._draft_lines: list[Strip] = []
        self._draft_reuse = StripReuse()  # its unchanged lines, kept from paint to paint
        self._base_style = Style()
        self.folds = ActionFolds()
        """Which tool blocks are unfolded, and which is selected."""
        self._markdown: tuple[MarkdownRenderer, MarkdownRenderer] | None = None
        self.more_above = False
        """The archive holds older messages of this session than are shown."""
        self._asked_before: str | None = None  # the first id older messages were asked for

    # -- state handed down -------------------------------------------------------
    @property
    def messages(self) -> tuple[EngineMessage, ...]:
        return tuple(self._messages)

    @property
    def line_count(self) -> int:
        return self._height

    @property
    def laid_out(self) -> bool:
        """Whether every message shown has its real height (not an estimate) yet."""
        return self._first_exact == 0

    @property
    def draft(self) -> EngineMessage | None:
        """The answer being written, shown below the messages (``None``: none)."""
        return self._draft

    def show(
        self,
        session_id: str | None,
        messages: Iterable[EngineMessage],
        *,
        placeholder: str = "",
        header: str = "",
        more_above: bool = False,
    ) -> None:
        """Replace what is shown with ``messages`` and scroll to the newest.

        ``placeholder`` is shown when there are no messages, ``header`` above them;
        ``more_above``: the archive holds older ones, read when scrolled to the top.
        """
        self.session_id = session_id
        self.more_above = more_above
        self._asked_before = None
        self.placeholder = placeholder
        self.header = header
        self._messages = list(messages)
        self._ids = {m.id for m in self._messages}
        self._draft = None
        self._layout()
        self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    def prepend(
        self, session_id: str, older: list[EngineMessage], *, more: bool, header: str = ""
    ) -> None:
        """Add ``older`` messages above those shown, the view held where it is.

        ``more``: the archive holds older ones still; ``header`` replaces the line above.
        """
        if session_id != self.session_id:
            return
        self._asked_before = None
        self.more_above = more
        self.header = header
        older = [m for m in older if m.id not in self._ids]
        anchor = self._anchor()
        self._messages[:0] = older
        self._ids.update(m.id for m in older)
        self._layout()
        if anchor is not None:
            anchor = (anchor[0] + len(older), anchor[1])
        self._restore(anchor)
        self.refresh()

    def set_draft(self, draft: EngineMessage | None) -> None:
        """Show (or, with ``None``, remove) an answer still being written, below the rest."""
        if draft is None and self._draft is None:
            return
        at_bottom = self.scroll_y >= self.max_scroll_y
        self._draft = draft
        self._draw_draft()
        self._resize_virtual()
        if at_bottom:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    def _draw_draft(self) -> None:
        draft, width = self._draft, self._width
        if draft is None or not width:
            self._draft_lines = []
            return
        previous = self._messages[-1] if self._messages else None
        self.folds.forget(draft.id)  # a draft changes under the same id
        self._draft_lines = render_block(
            draft,
            previous,
            width,
            self.tz,
            self.get_component_rich_style,
            view=self.folds,
            markdown=self.markdown[1],
            reuse=self._draft_reuse,
        )
        self._draft_reuse.drawn()

    @property
    def markdown(self) -> tuple[MarkdownRenderer, MarkdownRenderer]:
        """Who draws answers' Markdown: for stored messages, and for the draft (which
        keeps its finished blocks). Made again when the theme changes."""
        if self._markdown is None:
            style = self.get_component_rich_style
            dark = self.app.current_theme.dark if self.is_attached else True
            stored = MarkdownRenderer(style, dark=dark)
            self._markdown = stored, MarkdownRenderer(style, dark=dark, kept=DRAFT_BLOCKS_KEPT)
        return self._markdown

    def _resize_virtual(self) -> None:
        # Not the reactive (layout=True: every widget of the screen arranged again on
        # each streamed line): CSS sizes the transcript, only its scrollbar follows.
        size = Size(self._width, self._height + len(self._draft_lines))
        if size != self.virtual_size:
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)

    def prepare(self, messages: list[EngineMessage]) -> None:
        """Wrap the newest of ``messages`` ahead of time, so showing them is instant."""
        width = self._width
        if not width:
            return
        need, covered = self._screenful(), 0
        for index in range(len(messages) - 1, -1, -1):
            if covered >= need:
                break
            covered += len(self._block_at(messages, index, width))

    def append(self, message: EngineMessage) -> None:
        """Add one message of the session shown (others, and repeats, are ignored)."""
        if message.session_id != self.session_id or message.id in self._ids:
            return
        at_bottom = self.scroll_y >= self.max_scroll_y
        self._messages.append(message)
        self._ids.add(message.id)
        if not self._width:
            return
        block = self._block_at(self._messages, len(self._messages) - 1, self._width)
        self._blocks.append(block)
        self._heights.append(len(block))
        self._starts.append(self._height)
        self._height += len(block)
        self._draw_draft()
        self._resize_virtual()
        if at_bottom:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    # -- layout ------------------------------------------------------------------
    def _screenful(self) -> int:
        return 2 * max(self.scrollable_content_region.height, 20)

    def _block_at(self, messages: list[EngineMessage], index: int, width: int) -> list[Strip]:
        previous = messages[index - 1] if index else None
        key = block_key(messages[index], previous, width, self.tz, self.folds)
        block = self._cache.get(key)
        if block is None:
            style = self.get_component_rich_style
            block = render_block(
                messages[index],
                previous,
                width,
                self.tz,
                style,
                view=self.folds,
                markdown=self.markdown[0],
            )
            self._cache[key] = block
        return block

    def _layout(self) -> None:
        """Wrap the newest messages now; estimate the rest and wrap them later."""
        self._generation += 1
        width = self._width = self.scrollable_content_region.width
        messages = self._messages
        count = len(messages)
        self._blocks = [None] * count
        self._heights = [0] * count
        if not width:
            self._reindex()
            return
        need, covered, index = self._screenful(), 0, count
        while index > 0 and covered < need:
            index -= 1
            block = self._block_at(messages, index, width)
            self._blocks[index] = block
            self._heights[index] = len(block)
            covered += len(block)
        self._first_exact = index
        for older in range(index):
            previous = messages[older - 1] if older else None
            self._heights[older] = estimate_height(
                messages[older], previous, width, self.tz, self.folds
            )
        self._reindex()
        if index:
            self.set_timer(WRAP_OLDER_DELAY, partial(self._wrap_older, self._generation))

    def _reindex(self) -> None:
        sums = list(accumulate(self._heights, initial=1 if self.header else 0))
        self._starts, self._height = sums[:-1], sums[-1]
        self._draw_draft()
        self._resize_virtual()

    def _wrap_older(self, generation: int) -> None:
        """Replace estimates by real blocks, a chunk at a time, the view held still."""
        if generation != self._generation or not self._first_exact:
            return
        anchor = self._anchor()
        stop, lines = max(0, self._first_exact - CHUNK), 0
        for index in range(self._first_exact - 1, stop - 1, -1):
            block = self._block_at(self._messages, index, self._width)
            self._blocks[index] = block
            self._heights[index] = len(block)
            lines += len(block)
            if lines >= CHUNK_LINES:
                stop = index
                break
        self._first_exact = stop
        self._reindex()
        self._restore(anchor)
        self.refresh()
        if stop:
            self.set_timer(WRAP_OLDER_DELAY, partial(self._wrap_older, generation))

    def _anchor(self) -> tuple[int, int] | None:
        """The block at the top of the view and the line within it (None: at the bottom)."""
        if self.scroll_y >= self.max_scroll_y or not self._starts:
            return None
        line = round(self.scroll_y)
        block = max(0, bisect.bisect_right(self._starts, line) - 1)
        return block, line - self._starts[block]

    def _restore(self, anchor: tuple[int, int] | None) -> None:
        if anchor is None:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            return
        block, offset = anchor
        line = self._starts[block] + min(offset, max(0, self._heights[block] - 1))
        self.scroll_to(y=line, animate=False, immediate=True)

    def _on_resize(self, _event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._width:
            anchor = self._anchor()
            self._layout()
            self._restore(anchor)
            self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # Colours live in the cached blocks: a new theme means drawing them again.
        self._cache.clear()
        self._markdown = None
        if self._width:
            self._layout()

    def lines(self) -> list[Strip]:
        """Every line of the messages and the draft as laid out now (to inspect or copy)."""
        width = self._width
        found = [self._block_at(self._messages, i, width) for i in range(len(self._messages))]
        return [strip for block in found for strip in block] + list(self._draft_lines)

    # -- painting ------------------------------------------------------------------
    def render_lines(self, crop: Region) -> list[Strip]:
        self._base_style = self.rich_style  # computed once per paint, not per line
        return super().render_lines(crop)

    def _text_line(self, text: str, width: int) -> Strip:
        muted = self.get_component_rich_style("transcript--placeholder")
        strip = Strip([Segment(text, muted)])
        return strip.extend_cell_length(width).crop(0, width).apply_style(self._base_style)

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if not self._messages and not self._draft_lines:
            if line == 0 and self.placeholder:
                return self._text_line(self.placeholder, width)
            return Strip.blank(width, self._base_style)
        if self.header and line == 0:
            return self._text_line(self.header, width)
        if line >= self._height:
            draft = line - self._height
            if draft < len(self._draft_lines):
                return self._draft_lines[draft].apply_style(self._base_style)
            return Strip.blank(width, self._base_style)
        if not self._starts:
            return Strip.blank(width, self._base_style)
        index = bisect.bisect_right(self._starts, line) - 1
        block = self._blocks[index]
        if block is None:
            # Scrolled up before the older messages were wrapped: draw this one
            # now, within its estimated height, until its real height is known.
            block = self._block_at(self._messages, index, self._width)
        offset = line - self._starts[index]
        if offset >= len(block):
            return Strip.blank(width, self._base_style)
        # Blocks are laid out at this width; the styled copy is cached by the strip.
        return block[offset].apply_style(self._base_style)
