"""SVG snapshots of the screens and dialogs at 120x40, on a seeded archive and a frozen clock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.engine import Engine, EngineConfig
from backend.questions import ChoiceOption, ChoiceQuestion
from screens.choice import ChoiceScreen
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle

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


LINTER_QUESTION = ChoiceQuestion(
    title="Choose a typescript linter",
    prompt="Several linters are common for typescript.",
    options=[
        ChoiceOption(
            "eslint",
            "eslint  ·  npx eslint .",
            "the most plugins; but slower on large projects",
            recommended=True,
        ),
        ChoiceOption("biome", "biome  ·  npx biome lint .", "fast; one tool for lint and format"),
    ],
)


def test_tool_choice_dialog(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _then()(pilot)
        # The question as the engine asks it; shown directly, so the transcript
        # below keeps its seeded (fixed) timestamps.
        await pilot.app.push_screen(ChoiceScreen(LINTER_QUESTION))
        await settle(pilot)

    app = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
