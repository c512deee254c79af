"""SVG snapshots of the session list, the status bar and the confirmation, on a seeded
archive and a frozen clock: 120x40 and 80x24 (the sidebar hidden by itself)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.engine import Engine, EngineConfig
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle, wait_for

SnapCompare = Callable[..., bool]


def _app(data_dir: Path, workspace: Path) -> SylkApp:
    seed_archive(data_dir, workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    return SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)


def _then(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        screen = main_screen(pilot.app)  # type: ignore[arg-type]
        await wait_for(pilot, lambda: screen.status_bar.facts is not None, "the status bar")
        screen.composer.cursor_blink = False
        await pilot.press(*keys)
        await settle(pilot)

    return run_before


def test_list_and_status_bar(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_then())


def test_narrow_hides_the_list(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_then())


def test_filter_open(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_then("ctrl+f", *"re"))


def test_delete_asks(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_then("alt+d"))


def test_delete_asks_narrow(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_then("alt+d"))
