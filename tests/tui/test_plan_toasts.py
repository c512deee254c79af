"""Toasts over a scripted plan's whole run: what needs the user's eye, one per plan.

The scripted model plays the Architect, the Librarian and the engineer (whose first
write fails the real ruff, so the pipeline loops: running, inspecting, running again,
inspecting, testing, completed). None of those steps is a toast (the DAG view shows
them); the plan's approval and its run's end are, and never more than two plan toasts
are on screen at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from sylk_tui.app import SylkApp
from sylk_tui.engine_link.messages import EngineNoticePosted
from tests.integration.orchestration.plan_runs import architect_proposes, node, plan, script
from tests.integration.plans.conftest import parts
from tests.support.scripted import execute, read_then_edit
from tests.tui.support import settle, wait_for
from tests.tui.test_dag_view import BAD, _ask_architect, _status, project  # noqa: F401


class ToastCountingApp(SylkApp):
    """Keeps every toast message ever shown and the most plan toasts shown at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[str] = []
        self.most_plan_toasts = 0

    def _refresh_notifications(self) -> None:
        shown = [toast.message for toast in self._notifications]
        self.seen += [message for message in shown if message not in self.seen]
        plan_toasts = sum(message.startswith("Plan ") for message in shown)
        self.most_plan_toasts = max(self.most_plan_toasts, plan_toasts)
        super()._refresh_notifications()


async def test_a_plan_run_shows_at_most_two_plan_toasts_and_no_step_toasts(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    project: Path,  # noqa: F811
    frozen_clock: Callable[[], datetime],
) -> None:
    write = execute("engineer.file.write", path="pkg/flags.py", content=BAD)
    fix = read_then_edit("pkg/flags.py", "import os\n\n", "", said="Removed the unused import.")
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("t1", "librarian"), node("e1", "engineer", "t1"))),
        {"text": "Found the flags."},
        {"text": "Writing.", "tool_calls": [write]}, {"text": "Wrote pkg/flags.py."},
        *fix,
    ])  # fmt: skip
    built = parts(data_dir, project, run_approved_plans=True, assume_yes=True)
    app = ToastCountingApp(Engine.from_parts(built), clock=frozen_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        session_id, asked = await _ask_architect(pilot)
        board = app.state.plans
        await wait_for(pilot, lambda: _status(board, session_id, "e1") == "passed", "e1 passes")
        await wait_for(pilot, asked.done, "the Architect's request to end")
        await wait_for(pilot, lambda: any("completed" in m for m in app.seen), "the end's toast")
        plan_toasts = [message for message in app.seen if message.startswith("Plan ")]
        assert plan_toasts[0] == "Plan p1 (version 1): awaiting approval"
        assert plan_toasts[-1] == "Plan p1 (version 1) completed"
        steps = ("running (loop", "inspecting", "testing", "task e1: completed")
        assert [m for m in app.seen if any(step in m for step in steps)] == []
        assert app.most_plan_toasts == 1  # each replaced the one before (at most 2 allowed)
        shown = [toast.message for toast in app._notifications]
        assert [m for m in shown if m.startswith("Plan ")] == ["Plan p1 (version 1) completed"]


async def test_three_plans_toasts_keep_the_newest_two_and_other_toasts_stay(
    engine: Engine,
) -> None:
    app = ToastCountingApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.notify("Exported 'a' to a.md", markup=False)
        for plan_id in ("p1", "p2", "p3"):
            app.post_message(
                EngineNoticePosted("info", f"Plan {plan_id}: awaiting approval", plan_id)
            )
        app.post_message(EngineNoticePosted("warning", "Plan p2, task e1: failed (loop 3)", "p2"))
        await pilot.pause()
        shown = [toast.message for toast in app._notifications]
        assert shown == [
            "Exported 'a' to a.md",
            "Plan p3: awaiting approval",
            "Plan p2, task e1: failed (loop 3)",
        ]
        assert app.most_plan_toasts == 2
