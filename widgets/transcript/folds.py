"""Which tool blocks of the transcript are unfolded, and which one is selected.

Each block opens as :func:`widgets.transcript.tool_blocks.default_expanded` says until the
user folds or unfolds it (a click on its header, ``ctrl+o``), or unfolds or
folds them all at once (``alt+o``, which forgets single choices). A block is
named by its message's id and its index among that message's actions, so the
choice survives re-wrapping, scrolling and coming back to the session.

The actions of stored messages are parsed once and kept; an answer still being
written changes, so the transcript forgets its entry on each new draft. A message's
reasoning (``widgets.transcript.reasoning_block``) is its first block, open while the model
thinks and folded once it answered.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING

from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from widgets.transcript.reasoning_block import is_reasoning, reasoning_action, reasoning_expanded
from widgets.transcript.tool_blocks import default_expanded

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from backend.agents.tool_actions import ToolAction
    from widgets.transcript.blocks import EngineMessage

Block = tuple[str, int]
"""A tool block: its message's id and its index among the message's actions."""


class ActionFolds:
    """The transcript's :class:`~widgets.transcript.blocks.ActionView`."""

    def __init__(self, *, parsed: int = 4096) -> None:
        self._parsed: LRUCache[str, list[ToolAction]] = LRUCache(parsed)
        self._choices: dict[Block, bool] = {}
        self._all: bool | None = None
        self.selection: Block | None = None

    # -- the view the renderer asks ----------------------------------------------------
    def actions(self, message: EngineMessage) -> list[ToolAction]:
        actions = self._parsed.get(message.id)
        if actions is None:
            from backend.agents.tool_actions import actions_from_payload

            payload = message.payload
            actions = actions_from_payload(payload) if isinstance(payload, dict) else []
            reasoning = reasoning_action(payload) if isinstance(payload, dict) else None
            if reasoning is not None:
                actions = [reasoning, *actions]
            self._parsed[message.id] = actions
        return actions

    def expanded(self, message_id: str, index: int, action: ToolAction) -> bool:
        chosen = self._choices.get((message_id, index))
        if chosen is not None:
            return chosen
        if self._all is not None:
            return self._all
        return reasoning_expanded(action) if is_reasoning(action) else default_expanded(action)

    def signature(self, message: EngineMessage) -> Hashable:
        actions = self.actions(message)
        if not actions:
            return ()
        folds = tuple(self.expanded(message.id, n, a) for n, a in enumerate(actions))
        return folds, self.selected(message.id)

    def click(self, message_id: str, index: int) -> Style:
        # repr: the id is quoted as a Python literal, which is how Textual parses actions.
        return Style.from_meta({"@click": f"toggle_block({message_id!r}, {index})", "block": index})

    def selected(self, message_id: str) -> int | None:
        selection = self.selection
        return selection[1] if selection is not None and selection[0] == message_id else None

    # -- what the user changes ---------------------------------------------------------
    def forget(self, message_id: str) -> None:
        """``message_id`` changed (a draft): parse its actions again when next drawn."""
        self._parsed.discard(message_id)

    def toggle(self, message: EngineMessage, index: int) -> bool:
        """Fold or unfold one block; returns whether it is now unfolded."""
        actions = self.actions(message)
        if not 0 <= index < len(actions):
            return False
        now = not self.expanded(message.id, index, actions[index])
        self._choices[(message.id, index)] = now
        return now

    def toggle_all(self) -> bool:
        """Unfold every block (or, when all were unfolded, fold them); returns which."""
        self._all = not self._all
        self._choices.clear()
        return self._all


def block_order(messages: Iterable[EngineMessage], folds: ActionFolds) -> list[Block]:
    """Every tool block of ``messages``, in the order they are shown."""
    return [(m.id, n) for m in messages for n in range(len(folds.actions(m)))]


def header_offset(lines: list[Strip], index: int) -> int | None:
    """Which of a message's ``lines`` holds the header of its block ``index``
    (the header's segments carry ``block`` in their style's meta)."""
    for offset, strip in enumerate(lines):
        for segment in strip:
            style = segment.style
            if style is not None and style.meta.get("block") == index:
                return offset
    return None
