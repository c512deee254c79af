"""The DAG view and the pipeline pane over a real engine running a scripted plan.

The scripted model plays the Architect (it submits the plan), the Librarian and the
engineer; the inspector is the project's real ruff. The view follows the run from the
engine's events: nodes move from pending to running and passed, the engineer node
waits on the librarian node, Enter opens a node's pipeline with the inspector's
finding, and the pane's keys reach the engine: p queues a message for the engineer
(the pane shows it waiting) and x interrupts the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from backend.engine import Engine
from screens.plans.dag_view import DagViewScreen
from screens.state.plan_view import PlanBoard
from sylk_tui.app import SylkApp
from tests.integration.orchestration.plan_runs import (
    HANG_TEXT,
    architect_proposes,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import parts
from tests.support.ruff_project import BAD, ruff_project
from tests.support.scripted import execute, read_then_edit
from tests.tui.support import settle, wait_for

SIZE = (120, 40)


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ruff_project(workspace, monkeypatch)


def _app(data_dir: Path, workspace: Path, clock: Callable[[], datetime]) -> SylkApp:
    built = parts(data_dir, workspace, run_approved_plans=True, assume_yes=True)
    return SylkApp(Engine.from_parts(built), clock=clock)


async def _ask_architect(pilot: Pilot[Any]) -> tuple[str, asyncio.Task[object]]:
    """The plan is asked for as the composer would (approved by ``assume_yes``)."""
    app = pilot.app
    assert isinstance(app, SylkApp)
    await settle(pilot)
    engine = await app.bridge.ready()
    session = await engine.ensure_session()
    await engine.approval_command(session.id, "auto-edit")
    asked = asyncio.create_task(engine.submit(session.id, "@architect add a --verbose flag"))
    return session.id, asked


def _status(board: PlanBoard, session_id: str, node_id: str) -> str | None:
    shown = board.plan(session_id)
    return shown.nodes[node_id].status if shown is not None else None


def _graph_text(app: SylkApp) -> str:
    screen = app.screen
    assert isinstance(screen, DagViewScreen)
    return str(screen.graph.render())


def _pane_text(app: SylkApp) -> str:
    screen = app.screen
    assert isinstance(screen, DagViewScreen)
    return screen.pane.text.plain


async def test_nodes_move_live_and_x_interrupts_the_running_task(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    workspace: Path,
    frozen_clock: Callable[[], datetime],
) -> None:
    doc = plan(node("t1", "librarian"), node("e1", "engineer", "t1"))
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(doc), {"text": "Found the flags in cli.py."}, {"text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    app = _app(data_dir, workspace, frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        session_id, asked = await _ask_architect(pilot)
        board = app.state.plans
        # The board follows the run from the engine's events, view open or not.
        await wait_for(pilot, lambda: _status(board, session_id, "e1") == "running", "e1 runs")
        assert _status(board, session_id, "t1") == "passed"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, DagViewScreen), "the DAG view")
        await wait_for(pilot, lambda: "loop 1/3" in _graph_text(app), "e1's loop")
        graph = _graph_text(app)
        assert "Layer 1" in graph and "Layer 2" in graph
        t1_line = next(line for line in graph.splitlines() if " t1 " in line)
        e1_line = next(line for line in graph.splitlines() if " e1 " in line)
        assert "librarian" in t1_line and "passed" in t1_line and "←" not in t1_line
        assert "engineer" in e1_line and "running" in e1_line and "← t1" in e1_line
        assert "s so far" in e1_line  # a running node's time

        await pilot.press("j", "enter")  # t1 -> e1, then its pipeline
        await wait_for(pilot, lambda: "Task e1 · engineer · running" in _pane_text(app), "pane")
        assert "running · loop 1/3" in _pane_text(app)
        assert "x interrupt" in _pane_text(app)

        await pilot.press("p", *"use -v", "enter")  # /task e1 prompt use -v
        await wait_for(pilot, lambda: "Your messages waiting" in _pane_text(app), "queued")
        assert "use -v" in _pane_text(app)

        await pilot.press("x")  # /task e1 interrupt, carried out by the engine
        await wait_for(pilot, lambda: _status(board, session_id, "e1") == "failed", "e1 fails")
        await wait_for(pilot, lambda: "interrupted" in _pane_text(app), "the pane says why")
        assert "failed" in _graph_text(app)
        await wait_for(pilot, asked.done, "the Architect's request to end")

        await pilot.press("escape")  # the pane closes, then the view
        assert not app.screen.query_one("#pipeline-pane").display
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DagViewScreen), "back")


async def test_enter_opens_the_pipeline_with_the_inspectors_issue(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    project: Path,
    frozen_clock: Callable[[], datetime],
) -> None:
    write = execute("engineer.file.write", path="pkg/flags.py", content=BAD)
    fix = read_then_edit("pkg/flags.py", "import os\n\n", "", said="Removed the unused import.")
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer"))),
        {"text": "Writing.", "tool_calls": [write]}, {"text": "Wrote pkg/flags.py."},
        *fix,
    ])  # fmt: skip
    app = _app(data_dir, project, frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        session_id, asked = await _ask_architect(pilot)
        board = app.state.plans
        await wait_for(pilot, lambda: _status(board, session_id, "e1") == "passed", "e1 passes")
        await wait_for(pilot, asked.done, "the Architect's request to end")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, DagViewScreen), "the DAG view")
        assert "loop 2/3" in _graph_text(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Inspector" in _pane_text(app), "the pipeline pane")
        pane = _pane_text(app)
        assert "completed · loop 2/3" in pane
        assert "loop 1: failed (1 issue(s))" in pane
        assert "pkg/flags.py:1 [ruff F401]" in pane and "loop 2: passed" in pane
        assert "1. Writing." in pane and "Removed the unused import." in pane
        assert "x interrupt" not in pane  # an ended pipeline takes no /task verbs
