"""SVG snapshots of the main screen at 120x40, on a seeded archive and a frozen clock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.engine.facade import Engine, EngineConfig
from sylk_tui.app import SylkApp
from tests.tui.conftest import FROZEN_NOW, main_screen, seed_archive, settle

SIZE = (120, 40)
SnapCompare = Callable[..., bool]


def _app(data_dir: Path, workspace: Path) -> SylkApp:
    seed_archive(data_dir, workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    # The app closes the engine when the snapshot run ends.
    return SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


def _then(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        main_screen(pilot.app).composer.cursor_blink = False  # type: ignore[arg-type]
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


def test_main_screen(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    assert snap_compare(_app(data_dir, workspace), terminal_size=SIZE, run_before=_then())


def test_new_session_dialog(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=_then("ctrl+n", *"spike"))


def test_after_switching_to_the_first_session(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=_then("alt+1"))
