"""Controlling a plan's run through the Orchestrator's ops and a restart: execute refuses a
plan not approved, status shows a running node, cancel stops the DAG and its agent's turn
(phase back to planning), and a new engine on the same data dir resumes a DAG the old one
left running without running its passed node again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.agents.gateway_tools import GatewayToolExecutor
from backend.orchestration import DagStatus
from backend.sessions.phases import SessionPhase
from backend.skills.builtin.catalog import agent_context
from tests.integration.orchestration.plan_runs import (
    HANG_TEXT,
    Run,
    architect_proposes,
    engineer_edits,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import say
from tests.support.polling import until

DOC = plan(node("t1", "librarian"), node("e1", "engineer", "t1"), node("e2", "engineer", "e1"))


async def _op(run: Run, sid: str, workspace: Path, op: str, **args: Any) -> Any:
    ex = GatewayToolExecutor(run.parts.gateway, agent_context("orchestrator", sid, workspace))
    return await ex.dispatch("execute", {"op": op, "args": args, "dry_run": False})


async def test_ops_refuse_an_unapproved_plan_show_a_running_node_and_cancel_the_dag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(DOC), {"text": "Found."}, {"text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        refused = await _op(run, sid, workspace, "orchestrator.dag.execute", plan_id="p1")
        assert refused.error is not None and refused.error.code.value == "CONFLICT"
        assert refused.error.details["reason"] == "plan_not_approved"
        await say(run.engine, sid, "/plan approve p1")
        await until(lambda: "running" in run.node_moves("e1"), what="e1 runs")
        await until(lambda: run.engine.turn_running(sid), what="the engineer's turn runs")
        seen = await _op(run, sid, workspace, "orchestrator.dag.status", plan_id="p1")
        assert seen.error is None and seen.result["running"] == "p1"
        rows = {n["id"]: n for n in seen.result["dags"][0]["nodes"]}
        assert rows["t1"]["status"] == "passed" and rows["e1"]["status"] == "running"
        assert rows["e1"]["running_for_s"] >= 0 and rows["e2"]["status"] == "pending"

        stopped = await _op(run, sid, workspace, "orchestrator.dag.cancel", plan_id="p1")
        assert stopped.error is None, stopped.error
        assert stopped.result["status"] == "cancelled"
        states = {n["id"]: n["status"] for n in stopped.result["nodes"]}
        assert states == {"t1": "passed", "e1": "cancelled", "e2": "cancelled"}
        assert run.dag_moves() == ["running", "cancelled"]
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        await until(lambda: not run.engine.turn_running(sid), what="the turn stopped")
        again = await _op(run, sid, workspace, "orchestrator.dag.cancel", plan_id="p1")
        assert again.error is not None and again.error.details["reason"] == "dag_not_running"
        unknown = await _op(run, sid, workspace, "orchestrator.dag.status", plan_id="nope")
        assert unknown.error is not None and unknown.error.code.value == "NOT_FOUND"
        assert (await run.notices(sid))[-1].startswith("Plan p1: cancelled (")
    finally:
        await run.engine.aclose()


async def test_a_restart_resumes_the_dag_and_does_not_run_a_passed_node_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    (workspace / "a.py").write_text("VERBOSE = False\n")
    doc = plan(node("t1", "librarian"), node("e1", "engineer", "t1"))
    script(tmp_path / "one.json", monkeypatch, [
        *architect_proposes(doc), {"text": "Found."}, {"text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    first = Run(data_dir, workspace)
    try:
        sid = await first.session_with_plan()
        await say(first.engine, sid, "/plan approve p1")
        await until(lambda: "running" in first.node_moves("e1"), what="e1 runs")
    finally:
        await first.engine.aclose()  # mid-run: the DAG stays "running" for the next start
    assert first.node_moves("t1") == ["pending", "running", "passed"]
    assert first.dag_moves() == ["running"]

    edits = engineer_edits("a.py", "VERBOSE = False", "VERBOSE = True")
    edits[0]["expect"] = "Found."  # t1's saved output still reaches e1
    script(tmp_path / "two.json", monkeypatch, edits)  # no turn for t1: it must not run
    second = Run(data_dir, workspace)
    try:
        assert second.engine.session_phase(sid) is SessionPhase.EXECUTION
        assert await second.engine.resume_dags() == [(sid, "p1")]
        outcome = await second.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert second.node_moves("t1") == ["passed"]
        assert [e.resumed for e in second.dag_events() if e.node_id == "t1"] == [True]
        assert second.node_moves("e1") == ["pending", "running", "passed"]
        assert (workspace / "a.py").read_text() == "VERBOSE = True\n"
        assert second.engine.session_phase(sid) is SessionPhase.INSPECTION
        assert await second.engine.resume_dags() == []  # finished: nothing to resume
        notices = await second.notices(sid)
        assert "Plan p1: ✓ t1 (librarian) passed before the restart: not run again" in notices
    finally:
        await second.engine.aclose()
