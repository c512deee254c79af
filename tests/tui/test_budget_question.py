"""A reached budget in the TUI: its dialog takes a limit the user types (checked as the
engine checks it: a limit with no room says why and the dialog stays open), and a limit
changed by ``/budget`` while the dialog is open closes it, the newer limit standing
and the paused turn going on. A real engine with the scripted provider, 100 tokens a
model call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, OptionList

from backend.engine import Engine, EngineConfig
from screens.questions.budget_question import NEW_LIMIT, BudgetQuestionScreen
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, send_line, settle, transcript_texts, wait_for

SIZE = (120, 40)
CALL = {"input_tokens": 90, "output_tokens": 10}


def budget_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: EngineConfig) -> Engine:
    turns = [{"text": "First answer.", "usage": CALL}, {"text": "Second answer.", "usage": CALL}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    return Engine(config.model_copy(update={"provider": "scripted"}))


@asynccontextmanager
async def declined_at_exit(engine: Engine) -> AsyncIterator[None]:
    """A failed test leaves no turn waiting on its question (the app's exit awaits it)."""
    try:
        yield
    finally:
        for asked in engine.pending_questions():
            engine.answer_question(asked.question_id, None)


async def reach_the_budget(pilot: Pilot[Any], app: SylkApp) -> BudgetQuestionScreen:
    """One answer (100 tokens), a limit of 80, then a second message that must ask."""
    await settle(pilot)
    await send_line(pilot, "why is test_sync flaky?")
    await wait_for(pilot, lambda: "First answer." in transcript_texts(app), "the first answer")
    await send_line(pilot, "/budget session tokens 80")
    main_screen(app).composer.value = "why is test_api flaky?"  # its turn waits: no settle
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, BudgetQuestionScreen), "the dialog")
    assert isinstance(app.screen, BudgetQuestionScreen)
    return app.screen


async def test_a_typed_limit_is_checked_in_the_dialog_and_continues_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    engine = budget_engine(tmp_path, monkeypatch, engine_config)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot, declined_at_exit(engine):
        dialog = await reach_the_budget(pilot, app)
        entry = dialog.query_one("#budget-limit", Input)
        assert not entry.display
        options = dialog.query_one("#budget-options", OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids == ["continue:160", "continue:320", NEW_LIMIT, "stop"]
        options.highlighted = 2
        await pilot.press("enter")
        await wait_for(pilot, lambda: entry.has_focus, "the entry")
        for typed in ("90", "lots"):  # no room above the 100 used; not a number
            entry.value = typed
            await pilot.press("enter")
            await pilot.pause()  # not settle: the turn's worker waits on this question
            assert app.screen is dialog  # still open, saying why
        why = str(dialog.query_one("#budget-why", Label).render())
        assert "'lots' is not a tokens limit" in why
        entry.value = "2k"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Second answer." in transcript_texts(app), "the turn")
        session_id = main_screen(app).transcript.session_id
        assert session_id is not None
        shown = (await engine.submit(session_id, "/budget"))[-1].payload["text"]
        assert "session tokens     200 tokens of 2,000 tokens" in str(shown)
        assert engine.pending_questions() == []


async def test_a_limit_set_by_command_closes_the_dialog_and_the_newer_limit_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    engine = budget_engine(tmp_path, monkeypatch, engine_config)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot, declined_at_exit(engine):
        dialog = await reach_the_budget(pilot, app)
        (asked,) = engine.pending_questions()
        session_id = asked.session_id
        assert session_id is not None
        await engine.submit(session_id, "/budget session tokens 5000")
        await wait_for(pilot, lambda: app.screen is not dialog, "the dialog closed")
        await wait_for(pilot, lambda: "Second answer." in transcript_texts(app), "the turn")
        assert not app.state.pending
        shown = (await engine.submit(session_id, "/budget"))[-1].payload["text"]
        assert "session tokens     200 tokens of 5,000 tokens" in str(shown)
