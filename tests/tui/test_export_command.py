"""/export in the TUI writes the session on screen (md, json, html) or the screen (svg) to a
file through the same export as the CLI, secrets scrubbed; a bad format is a notice."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from backend.engine import Engine
from screens.palette_actions import PALETTE_ACTIONS
from tests.support.polling import until
from tests.tui.support import RecordingApp, send_line, settle

SIZE = (120, 40)
BEARER = "tuiplantedbearer0123456789"


async def test_export_each_format_from_the_composer(engine: Engine, tmp_path: Path) -> None:
    session = await engine.create_session("exported")
    await engine.submit(session.id, f"explain the cache; Authorization: Bearer {BEARER}")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for fmt in ("md", "json", "html", "svg"):
            await send_line(pilot, f"/export {fmt} {tmp_path / ('out.' + fmt)}")
            target = tmp_path / f"out.{fmt}"

            async def written(target: Path = target) -> bool:
                await pilot.pause()
                return await asyncio.to_thread(target.exists)

            await until(written, what=f"the {fmt} export")
        await send_line(pilot, "/export pdf")
        await settle(pilot)
    texts = {fmt: (tmp_path / f"out.{fmt}").read_text() for fmt in ("md", "json", "html", "svg")}
    assert "# exported" in texts["md"] and "explain the cache" in texts["md"]
    assert json.loads(texts["json"])["session"]["id"] == session.id
    assert "<!DOCTYPE html>" in texts["html"] and texts["svg"].startswith("<svg")
    assert [fmt for fmt, text in texts.items() if BEARER in text] == []
    assert any(f"to {tmp_path / 'out.md'}" in said for _, said in app.notices)
    assert ("error", "no format 'pdf': use /export md|json|html|svg [FILE]") in app.notices


def test_the_palette_offers_every_export_format() -> None:
    commands = {a.command for a in PALETTE_ACTIONS}
    assert {"/export md", "/export json", "/export html", "/export svg"} <= commands
