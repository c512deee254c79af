"""How one transcript message looks: a block of lines, and a cheap guess of its height.

A block is a gutter (time and who spoke) and the wrapped text; a day rule
opens the first message of each day and a blank line separates the user's
turns. Styles come from the widget's component classes, so themes decide.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, tzinfo
from typing import Any

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from backend.guide.routing.decision import describe_route
from backend.messages import Message, MessageType, message_text
from widgets.line_wrap import wrap_plain
from widgets.markdown_reflow import list_indent, reflow_markdown

TIME_WIDTH = 5  # "14:03"
LABEL_WIDTH = 9  # "you", "sylk", "architect"
GUTTER = TIME_WIDTH + 1 + LABEL_WIDTH + 1
MIN_BODY = 8

EngineMessage = Message[dict[str, Any]]
StyleOf = Callable[[str], Style]


def message_kind(message: EngineMessage) -> str:
    """How a message is drawn: ``user``, ``notice``, ``error`` or ``agent``."""
    if message.type in (MessageType.USER_INPUT, MessageType.USER_RESPONSE):
        return "user"
    if message.type is MessageType.SYSTEM_NOTICE:
        payload = message.payload
        return "error" if isinstance(payload, dict) and payload.get("error") else "notice"
    return "agent"


def local_day(message: EngineMessage | None, tz: tzinfo | None) -> date | None:
    return None if message is None else message.timestamp.astimezone(tz).date()


def route_line(message: EngineMessage) -> str | None:
    """How the Guide routed a user's line, or None for lines without a route."""
    payload = message.payload
    route = payload.get("route") if isinstance(payload, dict) else None
    if message_kind(message) != "user" or not isinstance(route, dict):
        return None
    return describe_route(route)


def _preformatted(message: EngineMessage) -> bool:
    payload = message.payload
    return isinstance(payload, dict) and bool(payload.get("preformatted"))


def body_lines(message: EngineMessage, width: int) -> list[str]:
    text = message_text(message).expandtabs(4)
    if _preformatted(message):
        # Columns must stay aligned: fold over-long lines, never re-flow them.
        return [part for line in text.split("\n") for part in chop_cells(line, width) or [""]]
    if message_kind(message) == "agent":
        # Answers are markdown, often hard-wrapped narrower than the screen.
        return wrap_plain(reflow_markdown(text), width, hang=list_indent)
    return wrap_plain(text, width)


def _spacer(message: EngineMessage, previous: EngineMessage | None, tz: tzinfo | None) -> str:
    """What opens the block: ``day`` (a rule), ``gap`` (a blank line) or nothing."""
    if local_day(message, tz) != local_day(previous, tz):
        return "day"
    if previous is not None and message_kind(message) == "user":
        return "gap"
    return ""


def estimate_height(
    message: EngineMessage, previous: EngineMessage | None, width: int, tz: tzinfo | None
) -> int:
    """About the lines ``render_block`` makes (word breaks may add a few)."""
    body = max(MIN_BODY, width - GUTTER)
    lines = sum(max(1, -(-cell_len(line) // body)) for line in message_text(message).split("\n"))
    routed = 1 if route_line(message) else 0
    return lines + routed + (1 if _spacer(message, previous, tz) else 0)


def block_key(
    message: EngineMessage, previous: EngineMessage | None, width: int, tz: tzinfo | None
) -> tuple[str, int, str]:
    return (message.id, width, _spacer(message, previous, tz))


def render_block(
    message: EngineMessage,
    previous: EngineMessage | None,
    width: int,
    tz: tzinfo | None,
    style: StyleOf,
) -> list[Strip]:
    local = message.timestamp.astimezone(tz)
    kind = message_kind(message)
    strips: list[Strip] = []
    spacer = _spacer(message, previous, tz)
    if spacer == "day":
        title = f" {local.strftime('%a %d %b %Y')} "
        rule = title.center(width, "─") if width > len(title) else title[:width]
        strips.append(_line([Segment(rule, style("transcript--day"))], cell_len(rule), width))
    elif spacer == "gap":
        strips.append(_line([], 0, width))
    label = "you" if kind == "user" else "sylk" if kind in ("notice", "error") else message.source
    if len(label) > LABEL_WIDTH:
        label = label[: LABEL_WIDTH - 1] + "…"
    head = [
        Segment(local.strftime("%H:%M"), style("transcript--time")),
        Segment(" "),
        Segment(label.ljust(LABEL_WIDTH), style(f"transcript--{kind}-label")),
        Segment(" "),
    ]
    indent = Segment(" " * GUTTER)
    body_style = style(f"transcript--{kind}")
    for n, line in enumerate(body_lines(message, max(MIN_BODY, width - GUTTER))):
        text = Segment(line, body_style)
        segments = [*head, text] if n == 0 else [indent, text]
        strips.append(_line(segments, GUTTER + cell_len(line), width))
    route = route_line(message)
    if route is not None:
        shown = chop_cells(route, max(MIN_BODY, width - GUTTER))[0]
        segments = [indent, Segment(shown, style("transcript--route"))]
        strips.append(_line(segments, GUTTER + cell_len(shown), width))
    return strips


def _line(segments: list[Segment], length: int, width: int) -> Strip:
    """A strip exactly ``width`` cells wide, so painting it needs no further copies."""
    if length < width:
        return Strip([*segments, Segment(" " * (width - length))], width)
    return Strip(segments, length).crop(0, width) if length > width else Strip(segments, width)
