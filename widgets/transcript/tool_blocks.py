"""A tool call in the transcript: one header line, and a body that folds away.

The header names the op and its key argument (the path, the command, the
query) and ends with the status: ``running…``, ``ok``, ``exit 2``, ``not
found``, ``denied``. The body is what the result says: an edit's unified
diff, coloured; a command's last lines of output (streamed while it runs); an
error's message; for a read, one line. Edits, commands and failures open
unfolded, reads folded (:func:`default_expanded`); the transcript keeps what the
user folded or unfolded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style

from widgets.transcript.diff_view import diff_lines

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from backend.agents.tool_actions import ToolAction

OPEN, FOLDED = "▾ ", "▸ "
BODY_INDENT = 2
DIFF_SHOWN = 80
"""Diff lines drawn in the transcript; the export holds every line the turn stored."""

TOOL_CLASSES = (
    "transcript--tool",
    "transcript--tool-title",
    "transcript--tool-ok",
    "transcript--tool-error",
    "transcript--tool-running",
    "transcript--tool-muted",
    "transcript--tool-output",
    "transcript--tool-selected",
)

TOOL_CSS = """
    & > .transcript--tool { color: $text; text-style: bold; }
    & > .transcript--tool-title { color: $text-accent; }
    & > .transcript--tool-ok { color: $text-success; }
    & > .transcript--tool-error { color: $text-error; text-style: bold; }
    & > .transcript--tool-running { color: $text-warning; text-style: italic; }
    & > .transcript--tool-muted { color: $text-muted; }
    & > .transcript--tool-output { color: $text-muted; }
    & > .transcript--tool-selected { background: $primary 40%; }
    & > .transcript--diff-add { color: $text-success; }
    & > .transcript--diff-del { color: $text-error; }
    & > .transcript--diff-hunk { color: $text-muted; text-style: dim; }
    & > .transcript--diff-file { color: $text; text-style: bold; }
    & > .transcript--diff-context { color: $text-muted; }
"""
"""Rules for the component classes above (and the diff's), inside the transcript's CSS."""

StyleOf = Callable[[str], Style]
Line = tuple[list[Segment], int]
"""The segments of one screen line and their width in cells."""


def default_expanded(action: ToolAction) -> bool:
    """Edits, commands and failures open unfolded; reads and searches folded."""
    return action.kind in ("edit", "command") or action.failed


def status_class(action: ToolAction) -> str:
    if action.status == "running":
        return "transcript--tool-running"
    if action.failed:
        return "transcript--tool-error"
    if action.status in ("preview", "stopped"):
        return "transcript--tool-muted"
    return "transcript--tool-ok"


def _duration(action: ToolAction) -> str:
    ms = action.duration_ms
    if ms is None or action.kind != "command":
        return ""
    return f" · {ms / 1000:.1f}s" if ms >= 1000 else f" · {ms:.0f}ms"


def header_text(action: ToolAction, expanded: bool) -> list[tuple[str, str]]:
    """The header as ``(text, component class)`` pieces."""
    return [(text, name) for text, name, _ in _header_pieces(action, expanded)]


def _header_pieces(action: ToolAction, expanded: bool) -> list[tuple[str, str, str]]:
    """``(text, class, part)``: part ``fixed`` is always shown, ``title`` and
    ``summary`` give way (in that order of precedence) when the line is short."""
    pieces = [
        (OPEN if expanded else FOLDED, "transcript--tool-muted", "fixed"),
        (action.op, "transcript--tool", "fixed"),
    ]
    if action.title:
        pieces.append((f"  {action.title}", "transcript--tool-title", "title"))
    pieces.append((f"  {action.marker}", status_class(action), "fixed"))
    if _duration(action):
        pieces.append((_duration(action), "transcript--tool-muted", "fixed"))
    if not expanded and action.summary and not action.failed:
        pieces.append((f" · {action.summary}", "transcript--tool-muted", "summary"))
    return pieces


def _fit(pieces: list[tuple[str, str, str]], width: int) -> list[tuple[str, str]]:
    """Cut the title (then the summary) so the op and the status always show."""
    room = width - sum(cell_len(text) for text, _, part in pieces if part == "fixed")
    fitted: list[tuple[str, str]] = []
    for text, name, part in pieces:
        shown = text
        if part != "fixed":
            if room < 3:
                continue
            if cell_len(text) > room:
                shown = chop_cells(text, room - 1)[0] + "…"
            room -= cell_len(shown)
        fitted.append((shown, name))
    return fitted


def body_text(action: ToolAction) -> list[tuple[str, str]]:
    """The body as ``(text, component class)`` pairs; the diff is one piece whose
    class is ``"diff"`` (it is coloured line by line)."""
    lines: list[tuple[str, str]] = []
    if action.approval:
        lines.append((action.approval, "transcript--tool-muted"))
    if action.failed and action.summary and action.exit_code is None:
        lines.append((action.summary, "transcript--tool-error"))
    elif action.summary and (action.kind not in ("edit", "command") or action.status == "preview"):
        lines.append((action.summary, "transcript--tool-muted"))
    if action.diff:
        lines.append((action.diff, "diff"))
    if action.output:
        output = action.output.rstrip("\n").split("\n")
        lines.extend((line, "transcript--tool-output") for line in output)
    elif action.kind == "command" and action.status == "running":
        lines.append(("(no output yet)", "transcript--tool-muted"))
    return lines


def render_action(
    action: ToolAction,
    width: int,
    style: StyleOf,
    *,
    expanded: bool,
    selected: bool = False,
    click: Style | None = None,
) -> list[Line]:
    """The block's screen lines at ``width`` cells: the header cut to fit, the body folded.

    ``click`` (a style carrying ``@click`` meta) makes the header a toggle; a
    ``selected`` header is drawn in the selection style.
    """
    width = max(1, width)
    extra = Style()
    if selected:
        extra += style("transcript--tool-selected")
    if click is not None:
        extra += click
    header: list[Segment] = []
    used = 0
    for text, name in _fit(_header_pieces(action, expanded), width):
        room = width - used
        if room <= 0:
            break
        shown = text if cell_len(text) <= room else chop_cells(text, max(1, room - 1))[0] + "…"
        header.append(Segment(shown, style(name) + extra))
        used += cell_len(shown)
    lines: list[Line] = [(header, used)]
    if not expanded:
        return lines
    indent = Segment(" " * BODY_INDENT)
    inner = max(1, width - BODY_INDENT)
    for text, name in body_text(action):
        if name == "diff":
            for part, part_style in diff_lines(text, inner, style, limit=DIFF_SHOWN):
                lines.append(([indent, Segment(part, part_style)], BODY_INDENT + cell_len(part)))
            continue
        for part in chop_cells(text.expandtabs(4), inner) or [""]:
            lines.append(([indent, Segment(part, style(name))], BODY_INDENT + cell_len(part)))
    return lines


def action_text(action: ToolAction) -> str:
    """The block as plain text (to copy): the header, then the whole stored body."""
    head = "".join(text for text, _ in header_text(action, expanded=True))[len(OPEN) :]
    body = [line for text, _ in body_text(action) for line in text.split("\n")]
    return "\n".join([head, *(f"  {line}" for line in body)])


def estimate_lines(action: ToolAction, expanded: bool) -> int:
    """About the lines :func:`render_action` draws (long lines may fold into more)."""
    if not expanded:
        return 1
    body = body_text(action)
    diff = sum(min(DIFF_SHOWN + 1, text.count("\n") + 1) for text, name in body if name == "diff")
    return 1 + diff + sum(1 for _, name in body if name != "diff")
