"""Tier 3 of tool discovery in the TUI: the engine asks, a dialog answers, the choice stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from backend.archive.store import Archive
from backend.engine.facade import Engine, EngineConfig
from screens.choice import ChoiceScreen
from sylk_tui.app import SylkApp
from tests.tui.conftest import main_screen, settle, transcript_texts

SIZE = (120, 40)


async def _until(pilot: Pilot[Any], check: Any, what: str, rounds: int = 400) -> None:
    for _ in range(rounds):
        await pilot.pause(0.01)
        if check():
            return
    raise AssertionError(f"never saw {what}")


def _typescript_project(root: Path) -> None:
    (root / "package.json").write_text(json.dumps({"devDependencies": {"typescript": "5.4.0"}}))
    (root / "index.ts").write_text("export const answer = 42;\n")


async def test_the_user_picks_a_linter_and_it_is_kept(data_dir: Path, workspace: Path) -> None:
    _typescript_project(workspace)
    app = SylkApp(Engine(EngineConfig(data_dir=data_dir, workspace=workspace)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        composer.value = "/tools linter"
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ChoiceScreen)
        assert dialog.question.title == "Choose a typescript linter"
        options = dialog.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids[:2] == ["eslint", "biome"]
        await pilot.press("down", "enter")  # biome
        await _until(pilot, lambda: any("Stored your choice: biome" in t for t in
                                        transcript_texts(app)), "the answer")  # fmt: skip
    archive = Archive(data_dir)
    try:
        stored = archive.get_preference("tools.typescript.linter")
        assert stored is not None and stored["tool"] == "biome"
    finally:
        archive.close()


async def test_escape_decides_later_and_stores_nothing(data_dir: Path, workspace: Path) -> None:
    _typescript_project(workspace)
    app = SylkApp(Engine(EngineConfig(data_dir=data_dir, workspace=workspace)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main_screen(app).composer.value = "/tools linter"
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")
        await pilot.press("escape")
        await _until(pilot, lambda: any("No typescript linter chosen" in t for t in
                                        transcript_texts(app)), "the answer")  # fmt: skip
    archive = Archive(data_dir)
    try:
        assert archive.get_preference("tools.typescript.linter") is None
    finally:
        archive.close()
