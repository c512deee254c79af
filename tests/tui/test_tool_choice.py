"""Tier 3 of tool discovery in the TUI: the engine asks, a dialog answers, the choice stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from screens.choice import ChoiceScreen
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, settle, transcript_texts, wait_for

SIZE = (120, 40)


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
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ChoiceScreen)
        assert dialog.question.title == "Choose a typescript linter"
        options = dialog.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids[:2] == ["eslint", "biome"]
        await pilot.press("down", "enter")  # biome
        await wait_for(pilot, lambda: any("Stored your choice: biome" in t for t in
                                        transcript_texts(app)), "the answer")  # fmt: skip
    archive = Archive(data_dir)
    try:
        stored = archive.get_preference("tools.typescript.linter")
        assert stored is not None and stored["tool"] == "biome"
    finally:
        archive.close()


async def test_escape_decides_later_and_stores_nothing(data_dir: Path, workspace: Path) -> None:
    _typescript_project(workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main_screen(app).composer.value = "/tools linter"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")
        await pilot.press("escape")
        # Later means later: the question waits in the inbox, unanswered.
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen), "it closed")
        (pending,) = engine.pending_questions()
        assert pending.question_id in app.state.pending
        assert engine.answer_question(pending.question_id, None)  # declined, later on
        await wait_for(pilot, lambda: any("No typescript linter chosen" in t for t in
                                        transcript_texts(app)), "the answer")  # fmt: skip
    archive = Archive(data_dir)
    try:
        assert archive.get_preference("tools.typescript.linter") is None
    finally:
        archive.close()


async def _ask(pilot: Pilot[Any], app: SylkApp) -> None:
    await settle(pilot)
    main_screen(app).composer.value = "/tools linter"
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")


async def test_a_question_answered_elsewhere_closes_its_dialog(
    data_dir: Path, workspace: Path
) -> None:
    _typescript_project(workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, app)
        # Answered by id, as the CLI or the MCP server would.
        (pending,) = engine.pending_questions()
        assert engine.answer_question(pending.question_id, "biome")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen), "it closed")
        await wait_for(pilot, lambda: any("Stored your choice: biome" in t for t in
                                          transcript_texts(app)), "the answer")  # fmt: skip


async def test_a_withdrawn_question_closes_its_dialog(data_dir: Path, workspace: Path) -> None:
    _typescript_project(workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, app)
        (pending,) = engine.pending_questions()
        pending.answer.cancel()  # what the board does when the asker gives up
        await wait_for(pilot, lambda: not isinstance(app.screen, ChoiceScreen), "it closed")
        await wait_for(pilot, lambda: any("No typescript linter chosen" in t for t in
                                          transcript_texts(app)), "the answer")  # fmt: skip
        assert engine.pending_questions() == []
