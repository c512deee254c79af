"""An approved plan runs through the engine with the scripted model: nodes as agent
requests (the upstream outputs in the request), the engineers' edits on disk, a status
event per transition in order, transcript notices, and the phase from planning through
execution to inspection; a failing node is retried, then fails the DAG for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.orchestration import DagStatus, NodeStatus
from backend.sessions.phases import SessionPhase
from tests.integration.orchestration.plan_runs import (
    Run,
    architect_proposes,
    engineer_edits,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import say


async def test_an_approved_plan_runs_librarian_then_two_engineers_and_moves_to_inspection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    (workspace / "a.py").write_text("VERBOSE = False\n")
    (workspace / "b.py").write_text("VERBOSE = False\n")
    first, second = (
        engineer_edits(f, "VERBOSE = False", "VERBOSE = True") for f in ("a.py", "b.py")
    )
    for turns in (first, second):  # each engineer is given the librarian's answer
        turns[0]["expect"] = "Flags live in a.py and b.py"
    doc = plan(node("t1", "librarian"), node("e1", "engineer", "t1"), node("e2", "engineer", "t1"))
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(doc),
        {"expect": "Task t1 of plan p1: do t1", "text": "Flags live in a.py and b.py."},
        *first, *second,
    ])  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        # The change request went to planning when the Architect proposed its plan.
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        approved = await say(run.engine, sid, "/plan approve p1")
        assert approved["text"] == "approved plan p1 (version 1)"
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert outcome.outputs["t1"] == "Flags live in a.py and b.py."
        said = sorted(str(outcome.outputs[e]).rsplit("\n", 1)[-1] for e in ("e1", "e2"))
        assert said == ["Edited a.py.", "Edited b.py."]
        assert (workspace / "a.py").read_text() == "VERBOSE = True\n"
        assert (workspace / "b.py").read_text() == "VERBOSE = True\n"

        assert run.dag_moves() == ["running", "passed"]
        for node_id in ("t1", "e1", "e2"):
            assert run.node_moves(node_id) == ["pending", "running", "passed"], node_id
        order = [(e.node_id, e.status) for e in run.dag_events()]
        t1_passed = order.index(("t1", "passed"))
        assert t1_passed < order.index(("e1", "running"))
        assert t1_passed < order.index(("e2", "running"))
        assert order[0] == (None, "running") and order[-1] == (None, "passed")
        assert {e.agent for e in run.dag_events() if e.node_id == "e1"} == {"engineer"}

        history = await run.engine.phase_history(sid)
        assert [(h.old, h.new) for h in history] == [
            (SessionPhase.IDLE, SessionPhase.PLANNING),
            (SessionPhase.PLANNING, SessionPhase.EXECUTION),
            (SessionPhase.EXECUTION, SessionPhase.INSPECTION),
        ]
        assert history[1].approval == "plan p1 v1"
        notices = await run.notices(sid)
        assert "Plan p1: ▶ t1 (librarian) started, attempt 1/3" in notices
        assert any(n.startswith("Plan p1: ✓ e2 (engineer) passed in ") for n in notices)
        assert notices[-1] == "Plan p1: every task passed (3 passed); next: inspection"

        [status] = await run.engine.dag_status(sid, "p1")
        assert status["status"] == "passed" and status["version"] == 1
        rows = {n["id"]: n for n in status["nodes"]}
        assert [rows[k]["status"] for k in ("t1", "e1", "e2")] == ["passed"] * 3
        assert all(r["attempts"] == 1 and r["duration_s"] >= 0 for r in rows.values())
    finally:
        await run.engine.aclose()
    assert (data_dir / "dags.db").stat().st_mode & 0o777 == 0o600


async def test_a_failed_attempt_is_retried_then_a_node_that_keeps_failing_stops_the_dag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    fault = {"error": {"kind": "bad_request", "message": "scripted failure"}}
    doc = plan(
        node("t1", "librarian", retry={"max": 1, "backoff_ms": 0}),
        node("e1", "engineer", "t1", retry={"max": 1, "backoff_ms": 0}),
        node("e2", "engineer", "e1"),
    )
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(doc),
        fault, {"text": "Found it."},  # t1: fails once, passes on the retry
        fault, fault,  # e1: fails twice: no retries left
    ])  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.FAILED
        assert run.node_moves("t1") == ["pending", "running", "retrying", "running", "passed"]
        assert run.node_moves("e1") == ["pending", "running", "retrying", "running", "failed"]
        assert run.node_moves("e2") == ["pending", "skipped"]
        assert outcome.records["t1"].attempts == 2
        assert outcome.with_status(NodeStatus.FAILED) == ["e1"]
        assert run.dag_moves() == ["running", "failed"]
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        notices = await run.notices(sid)
        assert any("↻ t1 (librarian) attempt 1/2 failed" in n for n in notices)
        assert any("✗ e1 (engineer) failed after 2 attempt(s)" in n for n in notices)
        assert notices[-1].startswith("Plan p1: failed at e1 (")
        [status] = await run.engine.dag_status(sid)
        assert status["status"] == "failed"
        assert {n["id"]: n["status"] for n in status["nodes"]} == {
            "t1": "passed", "e1": "failed", "e2": "skipped"}  # fmt: skip
    finally:
        await run.engine.aclose()
