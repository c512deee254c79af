"""Session export and import: a session as Markdown, JSON, HTML or SVG, and back from JSON.

- ``session_export``: :func:`export_session`, the one call front ends make.
- ``markdown``: the transcript as Markdown (tool calls, diffs, command output, reasoning).
- ``plan_markdown``: the plans with their DAGs' node states, and usage, for Markdown.
- ``document``: the whole session as a JSON document (every row it owns in the archive).
- ``importing``: that document read back, checked, into an archive (``sylk sessions import``).
- ``pages``: Markdown as a self-contained HTML page or a terminal-rendered SVG.
- ``scrubbing``: what keeps secrets out of every format.
- ``app_export``: the TUI's ``/export`` (loads Textual: only the app imports it).
"""

from __future__ import annotations

from typing import Any, Literal

from backend.messages import Message
from backend.sessions.models import Session
from sylk_tui.export.document import EXPORT_VERSION, dumps, header
from sylk_tui.export.markdown import action_markdown, reasoning_markdown, to_markdown

ExportFormat = Literal["md", "json"]

__all__ = [
    "EXPORT_VERSION",
    "action_markdown",
    "reasoning_markdown",
    "render",
    "to_json",
    "to_markdown",
]


def to_json(session: Session, transcript: list[Message[dict[str, Any]]]) -> str:
    """The session and its messages as JSON (the whole session: ``export_session``)."""
    return dumps(header(session, transcript))


def render(session: Session, transcript: list[Message[dict[str, Any]]], fmt: ExportFormat) -> str:
    return to_markdown(session, transcript) if fmt == "md" else to_json(session, transcript)
