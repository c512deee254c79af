"""One session exported whole, in any format, with every secret scrubbed.

The one entry point front ends call (``sylk sessions export``, the TUI's ``/export``):
:func:`export_session` reads the session's document from the engine
(:func:`~.document.whole_session`), then writes it as JSON, or as Markdown (the transcript,
then its plans and usage) and, from that Markdown, as an HTML page or an SVG.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.messages import Message
from backend.sessions.models import Session
from sylk_tui.export.document import dumps, whole_session
from sylk_tui.export.formats import SessionFormat
from sylk_tui.export.markdown import to_markdown
from sylk_tui.export.pages import html_page, terminal_svg
from sylk_tui.export.plan_markdown import plan_markdown, usage_markdown
from sylk_tui.export.scrubbing import Scrubber

if TYPE_CHECKING:
    from backend.engine import Engine


def full_markdown(
    session: Session, transcript: list[Message[dict[str, Any]]], document: dict[str, Any]
) -> str:
    """The transcript, then each plan with its DAG's state, then usage per agent."""
    extra = [*plan_markdown(document), *usage_markdown(document)]
    text = to_markdown(session, transcript)
    return text if not extra else text.rstrip("\n") + "\n\n" + "\n".join(extra)


def engine_data_dir(engine: Engine) -> Path | None:
    """The data dir of ``engine``'s archive (where ``sylk mcp serve``'s tokens are)."""
    from backend.archive.store import Archive

    archive = engine.archive
    return archive.path.parent if isinstance(archive, Archive) else None


async def export_session(
    engine: Engine, session: Session, fmt: SessionFormat, *, data_dir: Path | None = None
) -> str:
    """``session`` in ``fmt``: everything the archive holds of it, no secret in it.

    ``data_dir``: where ``sylk mcp serve``'s tokens are, so they are scrubbed too
    (default: the engine's archive's).
    """
    data_dir = data_dir if data_dir is not None else engine_data_dir(engine)
    scrubber = Scrubber.for_export(engine.redactor, data_dir=data_dir)
    document = await whole_session(engine, session, scrubber)
    if fmt == "json":
        return dumps(document)
    transcript = await engine.transcript(session.id)
    markdown = scrubber.text(full_markdown(session, transcript, document))
    title = scrubber.text(f"Sylk session {session.name}")
    if fmt == "html":
        return html_page(title, markdown)
    if fmt == "svg":
        return terminal_svg(title, markdown)
    return markdown
