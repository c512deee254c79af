"""SVG snapshot of the DAG view at 120x40: a plan mid-run, the engineer's pipeline open.

The board is given the plan and its events as the engine would publish them (the
snapshot needs fixed times); the live path is tested in ``test_dag_view``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from backend.engine import Engine, EngineConfig
from backend.events import DagStatusChanged, PipelineMoved
from screens.plans.dag_view import DagViewScreen
from screens.state.plan_view import PlanBoard
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, seed_archive, settle

SIZE = (120, 40)
SnapCompare = Callable[..., bool]
PLAN = {
    "id": "p1",
    "nodes": [
        {"id": "t1", "agent": "librarian", "prompt": "Find the CLI's flag parsing"},
        {"id": "e1", "agent": "engineer", "prompt": "Add --verbose to the parser",
         "depends_on": ["t1"]},
        {"id": "e2", "agent": "engineer", "prompt": "Log at debug level when verbose",
         "depends_on": ["t1"]},
        {"id": "r1", "agent": "tester", "prompt": "Test the flag", "depends_on": ["e1", "e2"]},
    ],
}  # fmt: skip
E1_PIPELINE: dict[str, Any] = {
    "task_id": "e1", "plan_id": "p1", "state": "running", "ended": False, "reason": "",
    "loop": 2, "max_loops": 3, "task_prompt": "Add --verbose to the parser",
    "files": ["pkg/cli.py"],
    "engineer_texts": ["Added the flag to the parser in pkg/cli.py."],
    "inspector": [{"loop": 1, "passed": False, "text": "", "failed_runs": [], "issues": [
        {"file": "pkg/cli.py", "line": 3, "column": 8, "category": "lint", "severity": "error",
         "code": "F401", "message": "`os` imported but unused", "suggestion": "", "tool": "ruff"},
    ]}],
    "tester": [], "ignored": [], "queued": ["keep the short -v too"], "read_messages": [],
    "notes": [],
}  # fmt: skip


def _feed(board: PlanBoard, session_id: str) -> None:
    board.loaded(session_id, "p1", 1, PLAN, None)
    at = FROZEN_NOW - timedelta(seconds=42)

    def moved(status: str, node_id: str | None = None, **fields: Any) -> None:
        board.dag_moved(DagStatusChanged(session_id=session_id, plan_id="p1", version=1,
                                         dag_id="d1", status=status, node_id=node_id,
                                         at=at, **fields))  # fmt: skip

    moved("running")
    moved("running", "t1", attempt=1, max_attempts=3)
    moved("passed", "t1", attempt=1, max_attempts=3, duration_s=4.2)
    moved("running", "e1", attempt=1, max_attempts=3)
    moved("running", "e2", attempt=1, max_attempts=3)
    moved("retrying", "e2", attempt=1, max_attempts=3, duration_s=9.5, error="timed out")
    moved("running", "e2", attempt=2, max_attempts=3)
    board.pipeline_moved(PipelineMoved(session_id=session_id, task_id="e1", plan_id="p1",
                                       state="running", loop=2, view=E1_PIPELINE))  # fmt: skip


def test_dag_view_with_a_pipeline_open(
    snap_compare: SnapCompare, data_dir: Path, workspace: Path
) -> None:
    sessions = seed_archive(data_dir, workspace)
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
    app = SylkApp(engine, clock=lambda: FROZEN_NOW, tz=UTC)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        main_screen(app).composer.cursor_blink = False
        session_id = app.state.viewed_id
        assert session_id == sessions[2].id
        _feed(app.state.plans, session_id)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(app.screen, DagViewScreen)
        await pilot.press("down", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
