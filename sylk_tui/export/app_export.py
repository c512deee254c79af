"""``/export FORMAT [FILE]`` in the TUI (and the palette's Export rows): the session on
screen as Markdown, JSON, HTML, or the screen itself as an SVG.

md, json and html are :func:`sylk_tui.export.session_export.export_session`, the same
document ``sylk sessions export`` writes; svg is what is on screen now
(``App.export_screenshot``), scrubbed of every secret the engine knows and with its web
fonts dropped, as the CLI's is. Without FILE the export goes where Textual puts
screenshots (the user's downloads folder, else the current directory), named after the
session and the time. The file is written on a worker thread; a failure is a notification.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual.app import App

from backend.clock import utc_now
from backend.errors import ErrorKind, SylkError

if TYPE_CHECKING:
    from screens.state.store import UiState
    from sylk_tui.engine_link.bridge import EngineBridge
    from sylk_tui.export.formats import SessionFormat

EXPORT_FORMATS = ("md", "json", "html", "svg")
USAGE = "/export md|json|html|svg [FILE]"


class ExportUsageError(SylkError):
    error_kind = ErrorKind.INVALID

    def __init__(self, said: str) -> None:
        super().__init__(f"{said}: use {USAGE}")


def parse_export(args: str) -> tuple[str, Path | None]:
    """``FORMAT [FILE]`` of an ``/export`` line; raises :class:`ExportUsageError`."""
    words = args.split(maxsplit=1)
    if not words:
        raise ExportUsageError("which format")
    fmt = words[0].lower().lstrip(".")
    if fmt not in EXPORT_FORMATS:
        raise ExportUsageError(f"no format {words[0]!r}")
    return fmt, Path(words[1].strip()).expanduser() if len(words) > 1 else None


def default_export_path(name: str, fmt: str) -> Path:
    from platformdirs import user_downloads_dir

    folder = Path(user_downloads_dir())
    safe = re.sub(r"[^\w.-]+", "-", name).strip("-.")[:40] or "session"
    stamp = utc_now().strftime("%Y%m%d-%H%M%S")
    return (folder if folder.is_dir() else Path.cwd()) / f"sylk-{safe}-{stamp}.{fmt}"


class ExportActions(App[None]):
    """The app's ``export`` action; ``SylkApp`` supplies the state and the bridge."""

    state: UiState
    bridge: EngineBridge

    def action_export_session(self, args: str = "") -> None:
        """``/export FORMAT [FILE]`` for the session on screen."""
        try:
            fmt, path = parse_export(args)
        except ExportUsageError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        viewed = self.state.viewed_id
        if viewed is None:
            self.notify("No session on screen to export", severity="warning", markup=False)
            return
        # The screen is taken now, as it is when asked for; the rest runs on a worker.
        screen_svg = self.export_screenshot(title="Sylk") if fmt == "svg" else None
        self.run_worker(
            self._export(viewed, fmt, path, screen_svg),
            group="export",
            description=f"export the session as {fmt}",
            exit_on_error=False,
        )

    async def _export(
        self, session_id: str, fmt: str, path: Path | None, screen_svg: str | None
    ) -> None:
        from sylk_tui.export.pages import without_font_urls
        from sylk_tui.export.scrubbing import Scrubber
        from sylk_tui.export.session_export import engine_data_dir, export_session

        engine = await self.bridge.ready()
        session = engine.get_session(session_id)
        data_dir = engine_data_dir(engine)
        if screen_svg is not None:
            scrubber = Scrubber.for_export(engine.redactor, data_dir=data_dir)
            # What the transcript holds shaped like a key, as values: on screen a line may
            # wrap between "Bearer" and its token, which no pattern would then recognise.
            payloads = [m.payload for m in await engine.transcript(session_id)]
            said = json.dumps(payloads, ensure_ascii=False, default=str)
            scrubber = scrubber.knowing(scrubber.secrets_in(said))
            # Spaces are &#160; in the picture: as the character itself, which a
            # pattern's \s matches, "Bearer <token>" is recognised there too.
            text = without_font_urls(scrubber.text(screen_svg.replace("&#160;", "\u00a0")))
        else:
            fmt_ = cast("SessionFormat", fmt)
            text = await export_session(engine, session, fmt_, data_dir=data_dir)
        target = path or default_export_path(session.name, fmt)
        try:
            await asyncio.to_thread(target.write_text, text, encoding="utf-8")
        except OSError as error:
            self.notify(f"Could not export to {target}: {error.strerror or error}",
                        severity="error", markup=False)  # fmt: skip
            return
        self.notify(f"Exported {session.name!r} to {target}", markup=False, timeout=8)
