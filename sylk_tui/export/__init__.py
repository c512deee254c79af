"""Session export and import: a session as Markdown, JSON, HTML or SVG, and back from JSON.

- ``session_export``: :func:`export_session`, the one call front ends make.
- ``markdown``: the transcript as Markdown (tool calls, diffs, command output, reasoning).
- ``plan_markdown``: the plans with their DAGs' node states, and usage, for Markdown.
- ``document``: the whole session as a JSON document (every row it owns in the archive).
- ``importing``: that document read back, checked, into an archive (``sylk sessions import``).
- ``pages``: Markdown as a self-contained HTML page or a terminal-rendered SVG.
- ``scrubbing``: what keeps secrets out of every format.
- ``app_export``: the TUI's ``/export`` (loads Textual: only the app imports it).

The helpers below import their format when called: the app imports ``app_export``
before its first frame, and the engine's models load only when a session is exported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from backend.messages import Message
    from backend.sessions.models import Session

ExportFormat = Literal["md", "json"]
Transcript = list["Message[dict[str, Any]]"]


def to_markdown(session: Session, transcript: Transcript) -> str:
    """The transcript as Markdown (``markdown.to_markdown``)."""
    from sylk_tui.export.markdown import to_markdown as markdown

    return markdown(session, transcript)


def to_json(session: Session, transcript: Transcript) -> str:
    """The session and its messages as JSON (the whole session: ``export_session``)."""
    from sylk_tui.export.document import dumps, header

    return dumps(header(session, transcript))


def render(session: Session, transcript: Transcript, fmt: ExportFormat) -> str:
    return to_markdown(session, transcript) if fmt == "md" else to_json(session, transcript)
