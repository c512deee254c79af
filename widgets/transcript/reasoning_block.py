"""An answer's reasoning in the transcript: a dimmed block above its text that folds.

What the model reasoned (``payload["reasoning"]``) is never part of the answer, so it
is drawn apart: while the turn runs (``payload["thinking"]``) the block is open, headed
"thinking…", and shows the reasoning's last :data:`LIVE_LINES` lines as they stream;
a finished answer's block is folded to one line, "▸ reasoning (N lines)".

To the transcript's folds (``widgets.transcript.folds``) the block is the message's
first tool block, an action with op :data:`REASONING_OP` placed before any text, so a
click on its header, ``ctrl+o``, ``alt+o``, ``[``/``]``, ``enter`` and ``c`` work on
it as on a tool call; only its drawing is its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from backend.agents.tool_actions import ToolAction
from widgets.line_wrap import wrap_plain
from widgets.transcript.tool_blocks import BODY_INDENT, FOLDED, OPEN, Line, StyleOf

REASONING_OP = "reasoning"
LIVE_LINES = 8
"""The end of a live block's reasoning drawn; the finished block, unfolded, shows all."""

REASONING_CLASSES = ("transcript--reasoning", "transcript--reasoning-title")
REASONING_CSS = """
    & > .transcript--reasoning { color: $text-muted; text-style: dim italic; }
    & > .transcript--reasoning-title { color: $text-muted; text-style: italic; }
"""


def reasoning_action(payload: Mapping[str, Any]) -> ToolAction | None:
    """The message's reasoning as a block (``None``: it has none)."""
    from backend.agents.tool_actions import ToolAction, terminal_text

    reasoning = payload.get("reasoning")
    if not isinstance(reasoning, str):
        return None
    text = terminal_text(reasoning).strip()  # the model's words never drive the terminal
    if not text:
        return None
    live = payload.get("thinking") is True
    return ToolAction(
        id=REASONING_OP,
        tool=REASONING_OP,
        op=REASONING_OP,
        status="running" if live else "ok",
        output=text,
        at=0,
    )


def is_reasoning(action: ToolAction) -> bool:
    return action.op == REASONING_OP and action.id == REASONING_OP


def reasoning_expanded(action: ToolAction) -> bool:
    """Open while the model is thinking, folded once it answered."""
    return action.status == "running"


def reasoning_title(action: ToolAction) -> str:
    if action.status == "running":
        return "thinking…"
    lines = (action.output or "").count("\n") + 1
    return f"reasoning ({lines} line{'s' if lines != 1 else ''})"


def _body(action: ToolAction, width: int) -> list[str]:
    lines = wrap_plain((action.output or "").expandtabs(4), max(1, width))
    if action.status == "running" and len(lines) > LIVE_LINES:
        return ["…", *lines[-LIVE_LINES:]]
    return lines


def render_reasoning(
    action: ToolAction,
    width: int,
    style: StyleOf,
    *,
    expanded: bool,
    selected: bool = False,
    click: Style | None = None,
) -> list[Line]:
    """The block's screen lines at ``width`` cells: its header, and its text when open."""
    width = max(1, width)
    extra = Style()
    if selected:
        extra += style("transcript--tool-selected")
    if click is not None:
        extra += click
    title = (OPEN if expanded else FOLDED) + reasoning_title(action)
    shown = title if cell_len(title) <= width else chop_cells(title, width)[0]
    lines: list[Line] = [([Segment(shown, style("transcript--reasoning-title") + extra)],
                          cell_len(shown))]  # fmt: skip
    if not expanded:
        return lines
    indent = Segment(" " * BODY_INDENT)
    body = style("transcript--reasoning")
    for part in _body(action, width - BODY_INDENT):
        lines.append(([indent, Segment(part, body)], BODY_INDENT + cell_len(part)))
    return lines


def estimate_reasoning(action: ToolAction, expanded: bool) -> int:
    """About the lines :func:`render_reasoning` draws (wrapping may add some)."""
    if not expanded:
        return 1
    lines = (action.output or "").count("\n") + 1
    return 1 + (min(lines, LIVE_LINES + 1) if action.status == "running" else lines)


def reasoning_text(action: ToolAction) -> str:
    """The block as plain text (to copy): all of the reasoning, headed."""
    return f"{reasoning_title(action)}\n{action.output or ''}"
