"""The plan board the DAG view reads: layers from a plan, and node states that only move
forward when a read of the DAG and the engine's events cross."""

from __future__ import annotations

from typing import Any

from textual.app import App

from backend.events import DagStatusChanged, PipelineMoved
from screens.state.plan_view import PlanBoard, layers_of
from tests.tui.support import FROZEN_NOW

DOC: dict[str, Any] = {"id": "p1", "nodes": [
    {"id": "a", "agent": "librarian", "prompt": "x"},
    {"id": "b", "agent": "engineer", "prompt": "x", "depends_on": ["a"]},
    {"id": "c", "agent": "engineer", "prompt": "x", "depends_on": ["a"]},
    {"id": "d", "agent": "tester", "prompt": "x", "depends_on": ["b", "c"]},
]}  # fmt: skip


def moved(status: str, node_id: str | None = None, **fields: Any) -> DagStatusChanged:
    fields.setdefault("dag_id", "d1")
    return DagStatusChanged(session_id="s1", plan_id="p1", version=1, status=status,
                            node_id=node_id, **fields)  # fmt: skip


def test_layers_come_from_the_dependencies_or_the_plans_own_order() -> None:
    assert layers_of(DOC) == [["a"], ["b", "c"], ["d"]]
    ordered = DOC | {"execution_order": [["a"], ["c", "b"], ["d"]]}
    assert layers_of(ordered) == [["a"], ["c", "b"], ["d"]]
    wrong = DOC | {"execution_order": [["a"], ["d"]]}  # leaves nodes out: not trusted
    assert layers_of(wrong) == [["a"], ["b", "c"], ["d"]]


async def test_a_read_older_than_the_events_does_not_take_a_node_back() -> None:
    app: App[None] = App()
    async with app.run_test() as pilot:
        board = PlanBoard(app, clock=lambda: FROZEN_NOW)
        changes: list[str] = []
        board.changed_signal.subscribe(app, changes.append)
        # Events of a plan the board has not read wait for the read.
        assert not board.dag_moved(moved("running", "a", attempt=1))
        assert board.plan("s1") is None
        stale = {"dag_id": "d1", "status": "running", "nodes": [
            {"id": "a", "status": "pending", "attempts": 0},
            {"id": "b", "status": "pending", "attempts": 0},
        ]}  # fmt: skip
        board.loaded("s1", "p1", 1, DOC, stale)
        shown = board.plan("s1")
        assert shown is not None and shown.nodes["a"].status == "running"
        assert shown.nodes["b"].depends_on == ["a"]
        assert board.dag_moved(moved("passed", "a", attempt=1, duration_s=1.5))
        board.loaded("s1", "p1", 1, DOC, stale)  # crossed with the event: ignored
        assert shown.nodes["a"].status == "passed" and shown.nodes["a"].duration_s == 1.5
        # A retry goes back to running: a later attempt.
        board.dag_moved(moved("running", "b", attempt=1, max_attempts=3))
        board.dag_moved(moved("retrying", "b", attempt=1, max_attempts=3, error="boom"))
        board.dag_moved(moved("running", "b", attempt=2, max_attempts=3))
        assert (shown.nodes["b"].status, shown.nodes["b"].attempt) == ("running", 2)
        # A new run of the plan (a resume) counts its attempts anew.
        board.dag_moved(moved("failed", "b", attempt=3, max_attempts=3))
        board.dag_moved(moved("running", "b", attempt=1, dag_id="d2"))
        assert shown.nodes["b"].status == "running"
        step = PipelineMoved(session_id="s1", task_id="b", plan_id="p1", state="inspecting")
        board.pipeline_moved(step)
        pipeline = board.pipeline("s1", "b")
        assert pipeline is not None and pipeline.state == "inspecting"
        await pilot.pause()
        assert changes and set(changes) == {"s1"}
