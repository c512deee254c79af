"""The transcript of the session on screen: its look, its keys and its tool blocks.

Laying out and painting the messages is :class:`~widgets.transcript.layout.TranscriptLayout`'s
work (:class:`~widgets.transcript.trim.TrimmedLayout` keeps it to about a thousand
messages); this widget adds the styles (component classes, so themes decide), and what
the user does with an answer's tool blocks: fold or unfold one (a click on its
header, ``enter`` on the selected one, the screen's ``ctrl+o``) or all (``alt+o``),
select the next or previous (``]``, ``[``) and copy one (``c``; the screen's ``alt+y``),
or the newest answer when none is selected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message

from widgets.transcript.blocks import answer_text, message_kind
from widgets.transcript.diff_view import DIFF_CLASSES
from widgets.transcript.folds import Block, block_order, header_offset
from widgets.transcript.layout import CHUNK, WRAP_OLDER_DELAY
from widgets.transcript.markdown_render import MARKDOWN_CLASSES, MARKDOWN_CSS
from widgets.transcript.reasoning_block import (
    REASONING_CLASSES,
    REASONING_CSS,
    is_reasoning,
    reasoning_text,
)
from widgets.transcript.tool_blocks import TOOL_CLASSES, TOOL_CSS, action_text
from widgets.transcript.trim import TrimmedLayout

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from widgets.transcript.blocks import EngineMessage

__all__ = ["CHUNK", "WRAP_OLDER_DELAY", "Transcript"]


class Transcript(TrimmedLayout, can_focus=True):
    """Messages of one session, oldest first, the newest at the bottom."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--time",
        "transcript--day",
        "transcript--placeholder",
        "transcript--user-label",
        "transcript--user",
        "transcript--route",
        "transcript--notice-label",
        "transcript--notice",
        "transcript--error-label",
        "transcript--error",
        "transcript--agent-label",
        "transcript--agent",
        "transcript--marker",
        *MARKDOWN_CLASSES,
        *TOOL_CLASSES,
        *DIFF_CLASSES,
        *REASONING_CLASSES,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("]", "select_block(1)", "Next block", show=False, id="transcript.next-block",
                tooltip="Select the next tool block of the transcript."),
        Binding("[", "select_block(-1)", "Previous block", show=False,
                id="transcript.previous-block",
                tooltip="Select the previous tool block of the transcript."),
        Binding("enter,space", "toggle_selected", "Fold block", show=False,
                id="transcript.fold-selected", tooltip="Fold or unfold the selected tool block."),
        Binding("c", "copy_block", "Copy block", show=False, id="transcript.copy-block",
                tooltip="Copy the selected tool block (else the newest answer) to the clipboard."),
    ]  # fmt: skip

    @dataclass
    class OlderWanted(Message):
        """Scrolled to the top of a transcript the archive holds more of: read the
        messages before ``first_id`` (answered with :meth:`Transcript.prepend`)."""

        session_id: str
        first_id: str

    DEFAULT_CSS = (
        """
    Transcript {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        & > .transcript--time { color: $text-muted; }
        & > .transcript--day { color: $text-muted; }
        & > .transcript--placeholder { color: $text-muted; text-style: italic; }
        & > .transcript--user-label { color: $accent; text-style: bold; }
        & > .transcript--user { color: $text; text-style: bold; }
        & > .transcript--route { color: $text-muted; text-style: italic; }
        & > .transcript--notice-label { color: $primary; }
        & > .transcript--notice { color: $text-muted; }
        & > .transcript--error-label { color: $error; text-style: bold; }
        & > .transcript--error { color: $text-error; }
        & > .transcript--agent-label { color: $secondary; text-style: bold; }
        & > .transcript--agent { color: $text; }
        & > .transcript--marker { color: $warning; text-style: bold; }
    """
        + MARKDOWN_CSS
        + TOOL_CSS
        + REASONING_CSS
        + """
    }
    """
    )

    # -- older history -------------------------------------------------------------------
    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 and self.more_above:
            self.want_older()

    def want_older(self) -> bool:
        """Ask for the messages before the first shown, once; False: none to ask for."""
        if not self.more_above or not self._messages or self.session_id is None:
            return False
        first = self._messages[0].id
        if self._asked_before != first:
            self._asked_before = first
            self.post_message(self.OlderWanted(self.session_id, first))
        return True

    # -- tool blocks ---------------------------------------------------------------------
    def find(self, message_id: str) -> EngineMessage | None:
        """The message (or the draft) shown with ``message_id``."""
        if self._draft is not None and self._draft.id == message_id:
            return self._draft
        return next((m for m in reversed(self._messages) if m.id == message_id), None)

    def relayout(self, *message_ids: str) -> None:
        """Lay out again the messages whose blocks changed (folded, unfolded, selected)."""
        if not self._width:
            return
        anchor = self._anchor()
        wanted = set(message_ids)
        for index, message in enumerate(self._messages):
            if message.id in wanted:
                block = self._block_at(self._messages, index, self._width)
                self._blocks[index], self._heights[index] = block, len(block)
        self._reindex()  # draws the draft again too
        self._restore(anchor)
        self.refresh()

    def relayout_all(self) -> None:
        anchor = self._anchor()
        self._layout()
        self._restore(anchor)
        self.refresh()

    def header_line(self, block: tuple[str, int]) -> int | None:
        """The line of the transcript a block's header is on (``None``: not shown)."""
        message_id, index = block
        if self._draft is not None and self._draft.id == message_id:
            offset = header_offset(self._draft_lines, index)
            return None if offset is None else self._height + offset
        for at, message in enumerate(self._messages):
            if message.id == message_id and self._width:
                offset = header_offset(self._block_at(self._messages, at, self._width), index)
                return None if offset is None else self._starts[at] + offset
        return None

    def blocks(self) -> list[Block]:
        """Every tool block shown, oldest first (the draft's last)."""
        shown = [*self.messages, *([self.draft] if self.draft is not None else [])]
        return block_order(shown, self.folds)

    def action_toggle_block(self, message_id: str, index: int) -> None:
        """Fold or unfold one block (a click on its header) and select it."""
        message = self.find(message_id)
        if message is None:
            return
        previous, self.folds.selection = self.folds.selection, (message_id, index)
        self.folds.toggle(message, index)
        self.relayout(message_id, *(previous or ())[:1])

    def action_toggle_selected(self) -> None:
        self.toggle_selected()

    def toggle_selected(self) -> bool:
        """Fold or unfold the selected block, else the newest; False: there is none."""
        block = self.folds.selection
        if block is None or self.find(block[0]) is None:
            block = next(reversed(self.blocks()), None)
        if block is None:
            return False
        self.action_toggle_block(*block)
        return True

    def toggle_all_blocks(self) -> bool:
        """Unfold every block (or fold them all); returns whether they are now unfolded."""
        unfolded = self.folds.toggle_all()
        self.relayout_all()
        return unfolded

    def action_select_block(self, step: int) -> None:
        """Select the block ``step`` blocks on (from the newest when none is selected)."""
        blocks = self.blocks()
        if not blocks:
            return
        here = self.folds.selection
        at = blocks.index(here) + step if here in blocks else len(blocks) - (step > 0)
        chosen = self.folds.selection = blocks[max(0, min(at, len(blocks) - 1))]
        self.relayout(chosen[0], *(here or ())[:1])
        line = self.header_line(chosen)
        if line is not None:
            self.scroll_to_region(Region(0, line, 1, 1), animate=False, immediate=True)

    def selected_text(self) -> str | None:
        """The selected block as plain text (``None``: nothing is selected)."""
        selection = self.folds.selection
        message = self.find(selection[0]) if selection is not None else None
        if selection is None or message is None:
            return None
        actions = self.folds.actions(message)
        if selection[1] >= len(actions):
            return None
        action = actions[selection[1]]
        return reasoning_text(action) if is_reasoning(action) else action_text(action)

    def copy_text(self) -> tuple[str, str] | None:
        """What a copy takes and what to call it: the selected block, else the newest
        answer as its Markdown source (``None``: there is neither)."""
        text = self.selected_text()
        if text is not None:
            return text, "the selected block"
        shown = [*self.messages, *([self.draft] if self.draft is not None else [])]
        for message in reversed(shown):
            if message_kind(message) == "agent":
                return answer_text(message), f"{message.source}'s answer"
        return None

    def action_copy_block(self) -> None:
        found = self.copy_text()
        if found is None:
            self.notify(
                "Nothing to copy: no block is selected and no answer is shown.", markup=False
            )
            return
        text, what = found
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        self.notify(f"Copied {what} ({lines} line{'s' if lines != 1 else ''}).", markup=False)
