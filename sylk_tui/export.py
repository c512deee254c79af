"""Session export: a transcript as Markdown or JSON, for sharing and review."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from backend.guide.routing.decision import describe_route
from backend.messages import Message, MessageType, message_text
from backend.sessions.models import Session

ExportFormat = Literal["md", "json"]
EXPORT_VERSION = 1

_SPEAKERS = {
    MessageType.USER_INPUT: "You",
    MessageType.SYSTEM_NOTICE: "Sylk",
}


def _stamp(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "-"


def _speaker(message: Message[Any]) -> str:
    return _SPEAKERS.get(message.type, message.source)


def to_markdown(session: Session, transcript: list[Message[dict[str, Any]]]) -> str:
    lines = [
        f"# {session.name}",
        "",
        f"- id: `{session.id}`",
        f"- state: {session.state.value}",
        f"- workspace: `{session.workspace}`",
        f"- created: {_stamp(session.created_at)}",
        f"- last active: {_stamp(session.last_active_at)}",
        f"- messages: {len(transcript)}",
        "",
    ]
    for message in transcript:
        lines.append(f"## {_speaker(message)} · {_stamp(message.timestamp)}")
        lines.append("")
        text = message_text(message)
        # Fence command output so Markdown renders it as it was shown.
        if message.payload.get("preformatted"):
            lines.extend(["```", text, "```"])
        else:
            lines.append(text)
        route = message.payload.get("route")
        if isinstance(route, dict):
            lines.extend(["", f"*{describe_route(route)}*"])
        lines.append("")
    return "\n".join(lines)


def to_json(session: Session, transcript: list[Message[dict[str, Any]]]) -> str:
    document = {
        "format": "sylk-session",
        "version": EXPORT_VERSION,
        "session": session.model_dump(mode="json"),
        "messages": [m.model_dump(mode="json") for m in transcript],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render(session: Session, transcript: list[Message[dict[str, Any]]], fmt: ExportFormat) -> str:
    return to_markdown(session, transcript) if fmt == "md" else to_json(session, transcript)
