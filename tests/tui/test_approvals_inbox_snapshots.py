"""SVG snapshots of the approvals inbox at 120x40 (a command, an edit, a plan and a
question from three sessions) and of the badge on the main screen; and the pending
registry's own rules, which need no app."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from textual.dom import DOMNode
from textual.pilot import Pilot

from backend.approvals import answers
from backend.engine import Engine, EngineConfig
from backend.events import ChoiceOption, ChoiceQuestion, PlanReview
from screens.state.pending import PendingQuestion, PendingQuestions
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle
from tests.tui.test_approval_snapshots import COMMAND, EDIT

SIZE = (120, 40)
SnapCompare = Callable[..., bool]
PLAN = ChoiceQuestion(
    title="Review plan p1 (version 1)",
    prompt="Approve, modify or ask why",
    plan=PlanReview("p1", 1, "Plan p1 (version 1, awaiting approval)\n\nLayer 1\n"
                    "  [engineer]  Change part 1\nLayer 2 (together)\n  [tester]  Run the tests"),
)  # fmt: skip
LINTER = ChoiceQuestion(
    title="Choose a typescript linter",
    prompt="Several linters fit this project; the choice is kept for every session.",
    options=[ChoiceOption("eslint", "eslint", "installed", recommended=True),
             ChoiceOption("biome", "biome", "faster, fewer rules")],
)  # fmt: skip


def _questions(session_ids: list[str]) -> list[tuple[str, ChoiceQuestion]]:
    return [
        (session_ids[0], answers.question(COMMAND)),
        (session_ids[2], answers.question(EDIT)),
        (session_ids[0], PLAN),
        (session_ids[3], LINTER),
    ]


def _app(data_dir: Path, workspace: Path, *keys: str, inbox: bool = True) -> tuple[SylkApp, Any]:
    sessions = seed_archive(data_dir, workspace)
    app = SylkApp(Engine(EngineConfig(data_dir=data_dir, workspace=workspace)),
                  clock=lambda: FROZEN_NOW, tz=UTC)  # fmt: skip

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        main_screen(pilot.app).composer.cursor_blink = False  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        asked = FROZEN_NOW - timedelta(minutes=10)
        for n, (session_id, question) in enumerate(_questions([s.id for s in sessions])):
            at = asked + timedelta(minutes=n)
            item = PendingQuestion(f"q{n}", session_id, question, loop.create_future(), at)
            app.state.pending.add(item)
        await settle(pilot)
        if inbox:
            await pilot.press("f2")
            await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return app, run_before


def test_the_inbox(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app, run_before = _app(data_dir, workspace)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_the_inbox_on_an_edit(snap_compare: SnapCompare, data_dir: Path, workspace: Path) -> None:
    app, run_before = _app(data_dir, workspace, "down")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_the_inbox_on_a_plan_asking_for_changes(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    app, run_before = _app(data_dir, workspace, "down", "down", "m")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_the_badge_on_the_main_screen(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    app, run_before = _app(data_dir, workspace, inbox=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


# -- the registry ------------------------------------------------------------------------
async def test_the_registry_lists_oldest_first_and_names_the_waiting_sessions() -> None:
    pending = PendingQuestions(DOMNode())
    loop = asyncio.get_running_loop()
    at = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
    late = PendingQuestion("late", "s1", LINTER, loop.create_future(), at + timedelta(seconds=5))
    early = PendingQuestion("early", "s2", PLAN, loop.create_future(), at)
    done: asyncio.Future[str | None] = loop.create_future()
    done.set_result(None)
    pending.add(late)
    pending.add(early)
    pending.add(PendingQuestion("settled", "s3", LINTER, done, at))  # answered before it came
    assert [q.question_id for q in pending.items()] == ["early", "late"]
    assert pending.waiting_sessions() == {"s1", "s2"} and pending.count("s1") == 1
    assert (early.kind, late.kind) == ("plan", "choice")
    assert pending.answer("late", "biome") and late.answer.result() == "biome"
    assert not pending.answer("late", "eslint")  # no longer pending: nothing is sent
    assert pending.settle("early") is early and len(pending) == 0
    assert not early.answer.done()  # settled elsewhere: the UI never answers it
