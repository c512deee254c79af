"""System text the engine lays out in columns (``/session list``, ``/status``) folds at
spaces on a narrow screen: no word that fits a line is cut in two ("na / me")."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from rich.cells import cell_len

from backend.engine import Engine
from backend.messages import Message, MessageType
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, send_line, settle, wait_for
from widgets.transcript import Transcript
from widgets.transcript.blocks import GUTTER, MIN_BODY, body_lines

NAMES = ("archivalist consolidation sweep", "nightly benchmark regression hunt")
LISTING = (
    "  #  id        state      phase      name\n"
    "  1  01aaaaaa  suspended  execution  archivalist consolidation sweep\n"
    "* 2  02aaaaaa  active     planning   nightly benchmark regression hunt"
)


def _split_words(text: str, lines: list[str], width: int) -> list[str]:
    """Words of ``text`` that fit a line of ``width`` cells yet are not whole in ``lines``."""
    pieces = {piece for line in lines for piece in line.split()}
    return [w for w in text.split() if cell_len(w) <= width and w not in pieces]


def test_a_listing_folds_at_spaces_at_every_width() -> None:
    notice = Message[dict[str, Any]](
        id="n1",
        session_id="s" * 32,
        source="sylk",
        type=MessageType.SYSTEM_NOTICE,
        payload={"text": LISTING, "preformatted": True},
        timestamp=FROZEN_NOW,
    )
    for width in range(MIN_BODY, 80):
        lines = body_lines(notice, width)
        assert all(cell_len(line) <= width for line in lines), width
        assert _split_words(LISTING, lines, width) == [], (width, lines)
        # Nothing is lost: every word is there, in order.
        assert "".join("".join(lines).split()) == "".join(LISTING.split())
    # A row that fits stays as it is (the columns line up).
    assert body_lines(notice, 80) == LISTING.split("\n")


async def test_session_list_and_status_wrap_at_words_on_a_narrow_screen(engine: Engine) -> None:
    for name in NAMES:
        await engine.create_session(name)
    app = SylkApp(engine, tz=UTC)
    async with app.run_test(size=(60, 30)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        await send_line(pilot, "/session list")
        await send_line(pilot, "/status")
        transcript = screen.query_one(Transcript)

        def notices() -> list[Message[dict[str, Any]]]:
            return [m for m in transcript.messages if m.payload.get("preformatted")]

        await wait_for(pilot, lambda: len(notices()) == 2, "both answers shown")
        assert any(name in notices()[0].payload["text"] for name in NAMES)
        for columns in (60, 44, 30):
            await pilot.resize_terminal(columns, 30)
            await pilot.pause()
            await pilot.pause()
            assert transcript.size.width <= columns
            body = max(MIN_BODY, transcript.scrollable_content_region.width - GUTTER)
            lines = [strip.text[GUTTER:].rstrip() for strip in transcript.lines()]
            assert all(cell_len(line) <= body for line in lines)
            for notice in notices():
                text = str(notice.payload["text"])
                assert _split_words(text, lines, body) == [], (columns, lines)
