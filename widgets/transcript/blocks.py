"""How one transcript message looks: a block of lines, and a cheap guess of its height.

A block is a gutter (time and who spoke) and the wrapped text; a day rule
opens the first message of each day and a blank line separates the user's
turns. An answer's text is Markdown (``widgets.transcript.markdown_render``); below it a
line names the agent that spoke and the Guide tier that routed the request to
it, after a "(stopped)" or "(truncated)" marker when the answer was cut short.
An answer's tool calls (``payload["actions"]``) are drawn where the agent made
them, between its paragraphs (``widgets.transcript.tool_blocks``), its reasoning above them
all (``widgets.transcript.reasoning_block``); which of them are unfolded, and which is
selected, the transcript decides through an :class:`ActionView`. Styles come
from the widget's component classes, so themes decide.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from datetime import date, tzinfo
from typing import TYPE_CHECKING, Any, Protocol

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from backend.message_types import MessageType
from widgets.line_wrap import wrap_columns, wrap_plain
from widgets.transcript.diff_view import diff_lines
from widgets.transcript.markdown_reflow import list_indent, reflow_markdown
from widgets.transcript.markdown_render import MarkdownRenderer
from widgets.transcript.reasoning_block import estimate_reasoning, is_reasoning, render_reasoning
from widgets.transcript.tool_blocks import Line, estimate_lines, render_action

TIME_WIDTH = 5  # "14:03"
LABEL_WIDTH = 9  # "you", "sylk", "architect"
GUTTER = TIME_WIDTH + 1 + LABEL_WIDTH + 1
MIN_BODY = 8

if TYPE_CHECKING:  # the engine's models (pydantic) load with the first message drawn
    from backend.agents.tool_actions import ToolAction
    from backend.messages import Message

    EngineMessage = Message[dict[str, Any]]
StyleOf = Callable[[str], Style]

MARKERS = {
    "cancelled": "(stopped)",
    "interrupted": "(stopped: the model's stream broke off)",
    "step_limit": "(stopped at the step limit)",
    "truncated": "(truncated)",
}
"""How an answer cut short ends, by the turn's ``stop``. The engine's loop writes the
first and last into the text itself (``backend.agents.loop``): that copy is dropped so
the marker shows once, styled."""


class ActionView(Protocol):
    """What the transcript tells the renderer about a message's tool calls."""

    def actions(self, message: EngineMessage) -> list[ToolAction]: ...

    def expanded(self, message_id: str, index: int, action: ToolAction) -> bool: ...

    def signature(self, message: EngineMessage) -> Hashable:
        """Changes whenever how the message's actions are drawn changes."""
        ...

    def click(self, message_id: str, index: int) -> Style | None:
        """The style that makes an action's header a toggle (and says which it is)."""
        ...

    def selected(self, message_id: str) -> int | None: ...


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
    from backend.guide.routing.decision import describe_route

    return describe_route(route)


def answer_marker(message: EngineMessage) -> str | None:
    """ "(stopped)", "(truncated)"... for an answer cut short (``None``: it was not)."""
    payload = message.payload
    if message_kind(message) != "agent" or not isinstance(payload, dict):
        return None
    stop = payload.get("stop")
    return MARKERS.get(stop) if isinstance(stop, str) else None


def answer_text(message: EngineMessage) -> str:
    """The message's text, without the marker the engine appended to a cut answer."""
    from backend.messages import message_text

    text = message_text(message)
    marker = answer_marker(message)
    if marker is not None and text.rstrip().endswith(marker):
        text = text.rstrip()[: -len(marker)].rstrip()
    return text


def speaker_line(message: EngineMessage) -> str | None:
    """Which agent answered and which Guide tier routed it there (``None``: no route is
    recorded, and the gutter's label already names who spoke)."""
    payload = message.payload
    if message_kind(message) == "user" or not isinstance(payload, dict):
        return None
    agent, tier = payload.get("agent"), payload.get("tier")
    if not isinstance(tier, str) or not tier:
        return None
    return f"{agent if isinstance(agent, str) else message.source} · {tier} tier"


def _preformatted(message: EngineMessage) -> bool:
    payload = message.payload
    return isinstance(payload, dict) and bool(payload.get("preformatted"))


def body_lines(message: EngineMessage, width: int, text: str | None = None) -> list[str]:
    """``text`` (by default the message's) wrapped as the message's kind wants it."""
    from backend.agents.tool_actions import terminal_text
    from backend.messages import message_text

    # What an agent or a tool wrote may carry escape sequences: they are dropped, not sent.
    text = terminal_text(message_text(message) if text is None else text).expandtabs(4)
    if _preformatted(message):
        # Columns stay aligned: a row that fits is kept as it is; one that does not
        # folds at spaces under its second column, never mid-word ("na / me").
        return wrap_columns(text, width)
    if message_kind(message) == "agent":
        # Answers are markdown, often hard-wrapped narrower than the screen.
        return wrap_plain(reflow_markdown(text), width, hang=list_indent)
    return wrap_plain(text, width)


def body_rows(
    message: EngineMessage,
    width: int,
    style: StyleOf,
    view: ActionView | None,
    markdown: MarkdownRenderer | None = None,
) -> list[Line]:
    """The message's body as screen lines ``width`` cells wide: text and tool blocks."""
    from backend.agents.tool_actions import answer_pieces, terminal_text
    from backend.messages import message_text

    body_style = style(f"transcript--{message_kind(message)}")

    def text_rows(text: str) -> list[Line]:
        if markdown is None or message_kind(message) != "agent" or _preformatted(message):
            lines = body_lines(message, width, text)
            return [([Segment(line, body_style)], cell_len(line)) for line in lines]
        clean = terminal_text(text).expandtabs(4)
        return markdown.rows(clean, width, body_style)

    payload = message.payload
    if isinstance(payload, dict) and payload.get("format") == "diff":
        return [
            ([Segment(t, st)], cell_len(t))
            for t, st in diff_lines(terminal_text(message_text(message)), width, style)
        ]
    actions = view.actions(message) if view is not None else []
    if not actions:
        return text_rows(answer_text(message))
    assert view is not None
    rows: list[Line] = []
    selected = view.selected(message.id)
    for piece in answer_pieces(answer_text(message), actions):
        if isinstance(piece, str):
            rows.extend(text_rows(piece))
            continue
        index, action = piece
        draw = render_reasoning if is_reasoning(action) else render_action
        rows.extend(
            draw(
                action,
                width,
                style,
                expanded=view.expanded(message.id, index, action),
                selected=selected == index,
                click=view.click(message.id, index),
            )
        )
    return rows


def _spacer(message: EngineMessage, previous: EngineMessage | None, tz: tzinfo | None) -> str:
    """What opens the block: ``day`` (a rule), ``gap`` (a blank line) or nothing."""
    if local_day(message, tz) != local_day(previous, tz):
        return "day"
    if previous is not None and message_kind(message) == "user":
        return "gap"
    return ""


def estimate_height(
    message: EngineMessage,
    previous: EngineMessage | None,
    width: int,
    tz: tzinfo | None,
    view: ActionView | None = None,
) -> int:
    """About the lines ``render_block`` makes (word breaks may add a few)."""
    from backend.messages import message_text

    body = max(MIN_BODY, width - GUTTER)
    lines = sum(max(1, -(-cell_len(line) // body)) for line in message_text(message).split("\n"))
    if view is not None:
        for index, action in enumerate(view.actions(message)):
            estimate = estimate_reasoning if is_reasoning(action) else estimate_lines
            lines += estimate(action, view.expanded(message.id, index, action))
    routed = 1 if route_line(message) or speaker_line(message) or answer_marker(message) else 0
    return lines + routed + (1 if _spacer(message, previous, tz) else 0)


def block_key(
    message: EngineMessage,
    previous: EngineMessage | None,
    width: int,
    tz: tzinfo | None,
    view: ActionView | None = None,
) -> tuple[str, int, str, Hashable]:
    folds = view.signature(message) if view is not None else ()
    return (message.id, width, _spacer(message, previous, tz), folds)


def render_block(
    message: EngineMessage,
    previous: EngineMessage | None,
    width: int,
    tz: tzinfo | None,
    style: StyleOf,
    *,
    view: ActionView | None = None,
    markdown: MarkdownRenderer | None = None,
    reuse: StripReuse | None = None,
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
    for n, (row, length) in enumerate(
        body_rows(message, max(MIN_BODY, width - GUTTER), style, view, markdown)
    ):
        segments = [*head, *row] if n == 0 else [indent, *row]
        if reuse is None:
            strips.append(_line(segments, GUTTER + length, width))
        else:
            strips.append(reuse.line(segments, GUTTER + length, width))
    route = route_line(message)
    if route is not None:
        shown = chop_cells(route, max(MIN_BODY, width - GUTTER))[0]
        segments = [indent, Segment(shown, style("transcript--route"))]
        strips.append(_line(segments, GUTTER + cell_len(shown), width))
    footer = _footer(message, max(MIN_BODY, width - GUTTER), style)
    if footer is not None:
        strips.append(_line([indent, *footer[0]], GUTTER + footer[1], width))
    return strips


def _footer(message: EngineMessage, width: int, style: StyleOf) -> Line | None:
    """The marker of an answer cut short and who answered, on one line."""
    marker, speaker = answer_marker(message), speaker_line(message)
    if marker is None and speaker is None:
        return None
    text = " · ".join(p for p in (marker, speaker) if p)
    shown = chop_cells(text, width)[0]
    cut = min(len(marker or ""), len(shown))
    segments = [Segment(shown[:cut], style("transcript--marker"))] if cut else []
    segments.append(Segment(shown[cut:], style("transcript--route")))
    return segments, cell_len(shown)


class StripReuse:
    """The lines of the last drawing of a block that is drawn again and again (the
    streaming answer), handed back for the lines that did not change: a new Strip
    costs its caches, and a kept one keeps the styled copies painting made of it."""

    def __init__(self) -> None:
        self._last: dict[tuple[tuple[Segment, ...], int], Strip] = {}
        self._now: dict[tuple[tuple[Segment, ...], int], Strip] = {}

    def line(self, segments: list[Segment], length: int, width: int) -> Strip:
        key = (tuple(segments), width)
        strip = self._now.get(key)
        if strip is None:
            strip = self._last.get(key)
        if strip is None:
            strip = _line(segments, length, width)
        self._now[key] = strip
        return strip

    def drawn(self) -> None:
        """One drawing is done: only its lines are kept for the next."""
        self._last, self._now = self._now, {}


def _line(segments: list[Segment], length: int, width: int) -> Strip:
    """A strip exactly ``width`` cells wide, so painting it needs no further copies."""
    if length < width:
        return Strip([*segments, Segment(" " * (width - length))], width)
    return Strip(segments, length).crop(0, width) if length > width else Strip(segments, width)
