"""SVG snapshots of the composer at 120x40: grown to three lines, and Tab's menu open."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from backend.engine import Engine, EngineConfig
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle

SIZE = (120, 40)
SnapCompare = Callable[..., bool]


def _app(data_dir: Path, workspace: Path) -> SylkApp:
    seed_archive(data_dir, workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    return SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


def _then(paste: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        composer = main_screen(pilot.app).composer  # type: ignore[arg-type]
        composer.cursor_blink = False
        composer.post_message(events.Paste(paste))
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


def test_a_pasted_paragraph_grows_the_composer(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    paste = "fix the flaky test:\n  test_sync fails one run in ten\n  see the watcher's debounce"
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=_then(paste))


def test_the_completion_menu_over_the_transcript(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=_then("@a", "tab", "down"))
