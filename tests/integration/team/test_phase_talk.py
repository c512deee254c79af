"""Talking to the team by phase, through ``Engine.submit`` with a scripted model: while a
plan runs, "what's taking so long?" answers with the running task (no model turn), "actually
also add X" stops the DAG and the Architect writes version 2 for approval; "stop" stops it
(phase planning, the Architect waits) and "resume" runs the rest without re-running what
passed; while a plan waits, "why three levels?" reaches the Architect with the plan's text,
a codebase question goes to the Librarian and "approve" still approves afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.agents.gateway_tools import GatewayToolExecutor
from backend.engine import Engine
from backend.sessions.phases import SessionPhase
from backend.skills.builtin.catalog import agent_context
from tests.integration.orchestration.plan_runs import HANG_TEXT, Run, architect_proposes, node, plan
from tests.integration.plans.conftest import say
from tests.support.polling import until
from tests.support.scripted import execute

DOC = plan(node("t1", "librarian"), node("t2", "librarian", "t1"))
REVISED = plan(
    node("t1", "librarian"), node("t2", "librarian", "t1"), node("t3", "librarian", "t2")
)
REVISED["nodes"][2]["prompt"] = "add the X option"
REVISED["nodes"][2]["context"] = {"reason": "the user asked for X too"}


def write(path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]],
          threads: dict[str, Any] | None = None) -> None:  # fmt: skip
    body = {"turns": turns, "threads": threads or {}, "chunk_delay_s": 0.05}
    path.write_text(json.dumps(body))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))


def revises(doc: dict[str, Any], feedback: str) -> list[dict[str, Any]]:
    """The Architect's turns for a revision: plan.modify with the new document, then a word."""
    call = execute("architect.plan.modify", plan_id="p1", feedback=feedback, plan=doc)
    return [{"expect": "revise the plan", "tool_calls": [call]}, {"text": "Revised."}]


async def _op(run: Run, sid: str, workspace: Path, op: str, **args: Any) -> Any:
    ex = GatewayToolExecutor(run.parts.gateway, agent_context("architect", sid, workspace))
    return await ex.dispatch("execute", {"op": op, "args": args, "dry_run": False})


async def _tier(run: Run, sid: str, line: str) -> str:
    said = [m for m in await run.engine.transcript(sid) if m.payload.get("text") == line]
    return str(said[-1].payload["route"]["tier"])


async def _running_t2(run: Run, sid: str) -> None:
    await until(lambda: "running" in run.node_moves("t2"), what="t2 runs")
    await until(lambda: run.engine.turn_running(sid), what="t2's turn runs")


async def test_status_then_a_revision_while_the_plan_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(DOC), {"text": "Found."}, {"text": HANG_TEXT},
        *revises(REVISED, "add X"), {"expect": "do t2", "text": "Done t2."},
        {"expect": "add the X option", "text": "Added X."},
    ])  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        refused = await _op(run, sid, workspace, "architect.execution.interrupt", action="stop")
        assert refused.error is not None and refused.error.code.value == "CONFLICT"
        assert refused.error.details["reason"] == "nothing_running"

        go = await say(run.engine, sid, "looks good, go")  # approves the waiting plan
        assert "approved plan p1" in go["text"]
        await _running_t2(run, sid)

        status = await say(run.engine, sid, "what's taking so long?")
        assert await _tier(run, sid, "what's taking so long?") == "phase"  # no model asked
        lines = status["text"].splitlines()
        assert lines[0] == "Phase: execution"
        assert any(line.startswith("Plan p1: running (1 of 2 tasks passed, 1 running)")
                   for line in lines)  # fmt: skip
        assert any("running" in line and "t2 (librarian) running for" in line for line in lines)
        assert any("passed" in line and "t1 (librarian) took" in line for line in lines)
        assert lines[-1] == "Waiting on you: nothing"

        revised = await say(run.engine, sid, "actually also add X")
        assert (
            "Plan p1 version 2 (awaiting approval) revises version 1 with: add X"
            in (revised["text"])
        )
        assert run.dag_moves() == ["running", "cancelled"]
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        versions = [(p.version, p.status, p.feedback) for p in await run.engine.plans(sid)]
        assert versions == [(1, "superseded", ""), (2, "awaiting_approval", "add X")]
        assert [n["id"] for n in (await run.engine.plans(sid))[-1].document["nodes"]] == [
            "t1", "t2", "t3",
        ]  # fmt: skip
        assert "not run again if the new version keeps them as they were: t1" in revised["text"]
        noted = await _op(run, sid, workspace, "architect.status.update", message="v2 waits")
        assert noted.error is None, noted.error
        assert "plan p1 v2 awaits approval (/plan approve p1)" in noted.result["waiting"]
        last = (await run.engine.transcript(sid))[-1]
        assert last.source == "architect" and last.payload["text"] == "v2 waits"

        await say(run.engine, sid, "approve")  # version 2 runs: t1 passed as planned before
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status.value == "passed"
        v2 = [e for e in run.dag_events() if e.version == 2 and e.node_id == "t1"]
        assert [(e.status, e.resumed) for e in v2] == [("passed", True)]
        assert run.node_moves("t3") == ["pending", "running", "passed"]
    finally:
        await run.engine.aclose()


async def test_stop_waits_for_instructions_and_resume_runs_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(DOC), {"text": "Found."}, {"text": HANG_TEXT},
        {"expect": "do t2", "text": "Done t2."},
    ])  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        await _running_t2(run, sid)

        stopped = await say(run.engine, sid, "stop")
        assert stopped["text"] == "plan p1: stopped"  # the Architect's note says it in full
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        await until(lambda: not run.engine.turn_running(sid), what="t2's turn stopped")
        note = [m for m in await run.engine.transcript(sid) if m.payload.get("interrupt")]
        said = str(note[-1].payload["text"])
        assert note[-1].source == "architect" and "I await your instructions" in said
        assert said.startswith("Stopped plan p1. 1 of 2 tasks passed, 1 cancelled.")
        again = await _op(run, sid, workspace, "architect.execution.interrupt", action="stop")
        assert again.error is not None and again.error.details["reason"] == "nothing_running"

        resumed = await say(run.engine, sid, "resume")
        assert resumed["text"] == "plan p1: resumed"
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status.value == "passed"
        assert run.node_moves("t1") == ["pending", "running", "passed", "passed"]
        assert run.node_moves("t2")[-2:] == ["running", "passed"]
        assert run.engine.session_phase(sid) is SessionPhase.INSPECTION
    finally:
        await run.engine.aclose()


async def test_a_question_and_a_codebase_question_then_approve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    (workspace / "middleware.py").write_text("def auth_middleware(request):\n    return request\n")
    write(
        tmp_path / "s.json",
        monkeypatch,
        [*architect_proposes(REVISED), {"text": "Found."}, {"text": "Done."}, {"text": "X."}],
        threads={
            "why": {"match": "why three levels", "turns": [
                {"expect": "add the X option", "text": "Three levels: each needs the last."}]},
            "codebase": {"match": "existing middleware", "turns": [
                {"text": "auth_middleware in middleware.py."}]},
        },
    )  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "why three levels?")
        replies = [m for m in await run.engine.transcript(sid) if m.source == "architect"]
        assert replies[-1].payload["text"] == "Three levels: each needs the last."

        found = await say(run.engine, sid, "show me the existing middleware")
        assert found.get("agent") == "librarian"
        assert [p.status for p in await run.engine.plans(sid)] == ["awaiting_approval"]

        approved = await say(run.engine, sid, "approve")
        assert "approved plan p1" in approved["text"]
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status.value == "passed"
    finally:
        await run.engine.aclose()


async def test_during_qa_plain_words_are_the_qa_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    write(tmp_path / "s.json", monkeypatch, [{"text": "unused"}])
    run = Run(data_dir, workspace)
    try:
        sid = (await run.engine.ensure_session()).id
        await run.engine.set_phase(sid, "planning", "a plan was proposed")
        await run.engine.set_phase(sid, "execution", "approved", approval="plan p1 v1")
        await run.engine.set_phase(sid, "inspection", "every task passed")
        skipped = await say(run.engine, sid, "skip the tests")
        assert skipped["text"] == "skip-tests: applies to the next session QA"
        assert await _tier(run, sid, "skip the tests") == "phase"
        overridden = await say(run.engine, sid, "ignore that finding")
        assert overridden["text"] == "override: applies to the next session QA"
    finally:
        await run.engine.aclose()


async def test_offline_the_plan_answers_for_itself_and_a_revision_needs_a_model(
    engine: Engine, workspace: Path
) -> None:
    sid = (await engine.ensure_session()).id
    ex = GatewayToolExecutor(
        (await engine.tools_gateway()), agent_context("architect", sid, workspace)
    )
    made = await ex.dispatch("execute", {"op": "architect.plan.create", "args": {"plan": REVISED},
                                         "dry_run": False})  # fmt: skip
    assert made.error is None, made.error
    why = await say(engine, sid, "why three levels?")
    assert why["text"].startswith("No model is configured for the Architect")
    assert "3 level(s), run in order: t1 -> t2 -> t3" in why["text"]
    assert (
        "- t3 (librarian, after t2): add the X option Reason: the user asked for X too"
        in (why["text"])
    )
    refused = await say(engine, sid, "also add per-endpoint config")
    assert refused["error"] == "PlanningNeedsModelError"
    assert [p.version for p in await engine.plans(sid)] == [1]  # nothing changed


async def test_the_status_shows_a_running_engineer_tasks_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("e1", "engineer"))
    write(tmp_path / "s.json", monkeypatch, [*architect_proposes(doc), {"text": HANG_TEXT}])
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "approve")
        await until(lambda: "running" in run.node_moves("e1"), what="e1 runs")
        await until(lambda: run.engine.turn_running(sid), what="e1's engineer turn runs")
        status = await say(run.engine, sid, "how far along are we?")
        assert "  pipeline Plan p1, task e1: running, loop 1/3" in status["text"].splitlines()
        stopped = await say(run.engine, sid, "halt")
        assert stopped["text"] == "plan p1: stopped"
        note = [m for m in await run.engine.transcript(sid) if m.payload.get("interrupt")]
        assert str(note[-1].payload["text"]).startswith("Stopped plan p1. 0 of 1 tasks passed")
    finally:
        await run.engine.aclose()
