"""The fix loop's ends: the user rejects the fix plan (back to planning, the findings
listed), the loop bound (3 fix rounds, then the user is asked; nobody answering stops
it), and ``architect.dag.create_fix`` as a client calls it. No Architect model here: QA
writes the fix plans itself, so the scripted model plays only the engineer."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.engine.team_work import session_qa
from backend.skills.builtin.catalog import agent_context
from tests.integration.team.session_qa_runs import FLAGS, QaRun, engineer_writes, node, plan

MAKES_GEN = "printf 'import os\\n\\nMODE = 1\\n' > pkg/gen.py"  # the pipeline never sees it


async def test_rejecting_the_fix_plan_sends_the_work_back_to_planning_with_the_findings(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = engineer_writes({"pkg/flags.py": FLAGS}, shell=MAKES_GEN)
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(node("e1")))
        await run.say(sid, "/plan approve p1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "awaiting_fix"
        assert record.fix_plan == "p1-fix1"
        [waiting] = await run.notices(sid, "awaiting_fix")
        assert "/plan approve p1-fix1" in waiting
        assert "session QA of plan p1: awaiting fix (fix plan p1-fix1)" in await run.say(
            sid, "/plan"
        )
        await run.say(sid, "/plan reject p1-fix1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "stopped" and record.fix_plan is None
        assert run.engine.session_phase(sid).value == "planning"
        [stopped] = await run.notices(sid, "stopped")
        assert stopped.startswith("Fix plan p1-fix1 was rejected: back to planning")
        assert "pkg/gen.py:1: [ruff F401]" in stopped
        status = await run.say(sid, "/qa")
        assert "Session QA of plan p1: stopped" in status and "F401" in status
        refused = await run.say(sid, "/qa run")  # planning: a new plan comes first
        assert refused.startswith("the session is in planning: QA runs after a plan's DAG")
    finally:
        await run.aclose()


async def test_the_loop_stops_after_three_fix_rounds_when_nobody_can_say_go_on(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gives_up = {"text": "I could not fix it.", "expect": "found these problems in pkg/gen.py"}
    no_test = {"expect": "Write tests for task", "text": "No new test for this."}
    turns = [*engineer_writes({"pkg/flags.py": FLAGS}, shell=MAKES_GEN), no_test, *[gives_up] * 3]
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True, assume_yes=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(node("e1")))
        record = await run.settle(sid)
        assert record is not None and record.stage == "stopped", record
        assert record.rounds == 3
        assert record.plans == ["p1", "p1-fix1", "p1-fix2", "p1-fix3"]
        assert len(await run.notices(sid, "findings")) == 4  # after p1 and each fix plan
        [stopped] = await run.notices(sid, "stopped")
        assert stopped.startswith("Session QA still fails after 3 fix rounds: stopped")
        assert run.engine.session_phase(sid).value == "planning"
        assert [p.plan_id for p in await run.engine.plans(sid)] == record.plans  # no 4th
    finally:
        await run.aclose()


async def test_create_fix_makes_a_reviewed_plan_from_a_clients_issue_lines(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = QaRun(data_dir, workspace, monkeypatch, [], offline_architect=True)
    try:
        sid = await run.session()
        gateway = await run.engine.tools_gateway()
        ctx = agent_context("architect", sid, workspace,
                            confinement=run.engine.confinement(workspace))  # fmt: skip
        issues = ["pkg/a.py:3: [ruff F401] `os` imported but unused", "pkg/b.py: E501 too long",
                  "pkg/a.py:9: [ruff E711] comparison to None"]  # fmt: skip
        envelope = await gateway.execute(ctx, "architect.dag.create_fix", {"issues": issues})
        assert envelope.ok, envelope
        result = envelope.result
        assert (result["plan_id"], result["tasks"], result["written_by"]) == (
            "session-fix1",
            2,
            "qa",
        )
        assert result["status"] == "awaiting_approval" and result["review"] == "unattended"
        stored = await run.parts.plans.latest(sid, "session-fix1")
        prompts = {n["id"]: n["prompt"] for n in stored.document["nodes"]}
        assert set(prompts) == {"fix1-pkg_a.py", "fix2-pkg_b.py"}
        assert "F401" in prompts["fix1-pkg_a.py"] and "E711" in prompts["fix1-pkg_a.py"]
        bad = await gateway.execute(ctx, "architect.dag.create_fix", {"issues": []})
        assert not bad.ok and bad.error is not None
        assert session_qa(run.parts).record(sid) is None  # a client's fix plan is not QA's
    finally:
        await run.aclose()
