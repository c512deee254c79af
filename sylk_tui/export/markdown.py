"""A session's transcript as Markdown, for sharing and review.

An answer's tool calls (``payload["actions"]``, see ``backend.agents.tool_actions``)
are exported where the agent made them: in Markdown a line naming the op, its key
argument and its status, then the edit's diff or the command's output tail in a
fence; in JSON as they are stored, inside each message's payload. Fences are made
longer than any run of backticks in what they hold, so no output closes them.

What the model reasoned (``payload["reasoning"]``) comes before its answer: in Markdown
a quoted "Reasoning" block, every line quoted, so nothing in it can close the quote or
open a heading of its own; in JSON the payload's field.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from backend.agents.tool_actions import (
    ToolAction,
    actions_from_payload,
    answer_pieces,
    terminal_text,
)
from backend.guide.routing.decision import describe_route
from backend.messages import Message, MessageType, message_text
from backend.sessions.models import Session

_SPEAKERS = {
    MessageType.USER_INPUT: "You",
    MessageType.SYSTEM_NOTICE: "Sylk",
}


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line of a list or table: control characters, newlines and ``|`` gone."""
    flat = " ".join(terminal_text(text).split())
    flat = flat.replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _stamp(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "-"


def _speaker(message: Message[Any]) -> str:
    return _SPEAKERS.get(message.type, message.source)


def _fenced(text: str, info: str = "") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text.rstrip("\n"), fence]


def _code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"`{text}`"


def action_markdown(action: ToolAction) -> list[str]:
    """One tool call: its line, then its diff or output (and why it failed)."""
    status = [action.marker]
    if action.duration_ms is not None and action.kind == "command":
        status.append(f"{action.duration_ms / 1000:.1f}s")
    if action.approval:
        status.append(action.approval)
    if action.summary and not action.diff and action.exit_code is None:
        status.append(action.summary)
    title = f" {_code(action.title)}" if action.title else ""
    lines = [f"> **{action.op}**{title} · {' · '.join(status)}", ""]
    if action.diff:
        lines.extend([*_fenced(action.diff, "diff"), ""])
    if action.output:
        lines.extend([*_fenced(action.output, "text"), ""])
    return lines


def reasoning_markdown(reasoning: str) -> list[str]:
    """The reasoning as a quoted block, headed "Reasoning"; nothing when there is none."""
    text = terminal_text(reasoning).strip()  # a document to read, never to run
    if not text:
        return []
    quoted = [f"> {line}".rstrip() for line in text.split("\n")]
    return ["> *Reasoning*", ">", *quoted, ""]


def _body(message: Message[dict[str, Any]]) -> list[str]:
    reasoning = message.payload.get("reasoning")
    thought = reasoning_markdown(reasoning) if isinstance(reasoning, str) else []
    return [*thought, *_answer(message)]


def _answer(message: Message[dict[str, Any]]) -> list[str]:
    text = terminal_text(message_text(message))  # a document to read, never to run
    # Fence command output so Markdown renders it as it was shown.
    if message.payload.get("preformatted"):
        return _fenced(text, "diff" if message.payload.get("format") == "diff" else "")
    actions = actions_from_payload(message.payload)
    if not actions:
        return [text]
    lines: list[str] = []
    for piece in answer_pieces(text, actions):
        if isinstance(piece, str):
            lines.extend([piece, ""])
        else:
            lines.extend(action_markdown(piece[1]))
    return lines[:-1] if lines and not lines[-1] else lines


def to_markdown(session: Session, transcript: list[Message[dict[str, Any]]]) -> str:
    lines = [
        f"# {session.name}",
        "",
        f"- id: `{session.id}`",
        f"- state: {session.state.value}",
        f"- phase: {session.phase.value}",
        f"- workspace: `{session.workspace}`",
        f"- created: {_stamp(session.created_at)}",
        f"- last active: {_stamp(session.last_active_at)}",
        f"- messages: {len(transcript)}",
        "",
    ]
    for message in transcript:
        lines.append(f"## {_speaker(message)} · {_stamp(message.timestamp)}")
        lines.append("")
        lines.extend(_body(message))
        route = message.payload.get("route")
        if isinstance(route, dict):
            lines.extend(["", f"*{describe_route(route)}*"])
        lines.append("")
    return "\n".join(lines)
