"""A budget reached in the middle of a plan's DAG pauses the model call and asks; with
a new limit the plan goes on from where it was (every scripted turn plays exactly once,
every node runs once and passes); "stop" ends the plan cleanly with the reason in the
transcript; a per-pipeline limit from the config names its pipeline; the limits a
session set survive a restart; bad /budget input is a typed error naming the usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.budgets import spend_of
from backend.orchestration import DagStatus
from backend.sessions.phases import SessionPhase
from tests.integration.budgets.budget_runs import (
    BudgetRun,
    answer_budget,
    budget_questions,
    budget_script,
)
from tests.integration.plans.conftest import say


async def test_a_budget_reached_mid_dag_pauses_and_a_new_limit_resumes_it_with_nothing_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = await run.session_with_plan()  # the Architect's two calls: 200 tokens
        shown = await say(run.engine, sid, "/budget session tokens 450")
        assert "session tokens     200 tokens of 450 tokens" in shown["text"]
        await run.approve_and_answer(sid)
        # t1 (300), e1's read (400) and edit (500): e1's last call waits for the user.
        asked = await answer_budget(run, "continue:2000")
        assert asked.question.title == "Budget reached: session tokens"
        assert asked.question.prompt.startswith("session tokens: 500 tokens used of 450 tokens")
        values = [o.value for o in asked.question.options]
        assert values == ["continue:900", "continue:1800", "stop"]

        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        for node_id in ("t1", "e1", "e2"):  # each node ran once: no retry, no rerun
            assert run.node_moves(node_id) == ["pending", "running", "passed"], node_id
        assert (workspace / "a.py").read_text() == "VERBOSE = True\n"
        assert (workspace / "b.py").read_text() == "VERBOSE = True\n"
        spent = await spend_of(run.parts.archive, sid)
        assert (spent.calls, spent.tokens) == (9, 900)  # every scripted turn played once
        assert len(budget_questions(run)) == 1

        notices = await run.notices(sid)
        paused = next(i for i, n in enumerate(notices) if n.startswith("⏸ Budget reached"))
        resumed = next(i for i, n in enumerate(notices) if n.startswith("▶ Budget raised"))
        e1_started = notices.index("Plan p1: ▶ e1 (engineer) started, attempt 1/3")
        e1_passed = next(i for i, n in enumerate(notices) if n.startswith("Plan p1: ✓ e1"))
        assert e1_started < paused < resumed < e1_passed
        assert notices[resumed].endswith("session tokens limit now 2,000 tokens")
        shown = await say(run.engine, sid, "/budget")
        assert "session tokens     900 tokens of 2,000 tokens" in shown["text"]
        assert "p1/e1: 300 tokens" in shown["text"]
    finally:
        await run.engine.aclose()


async def test_stop_at_a_budget_ends_the_dag_cleanly_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/budget session tokens 450")
        await run.approve_and_answer(sid)
        await answer_budget(run, "stop")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.CANCELLED, outcome
        assert run.node_moves("e2") == ["pending", "cancelled"]  # never started
        assert (workspace / "b.py").read_text() == "VERBOSE = False\n"
        spent = await spend_of(run.parts.archive, sid)
        assert spent.calls == 5  # nothing called after the limit
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING
        notices = await run.notices(sid)
        assert (
            "■ Budget reached, work stopped (session tokens: 500 tokens used of 450 tokens); "
            "raise it with /budget session tokens N"
        ) in notices
        assert any(n.startswith("Plan p1: cancelled") for n in notices)
    finally:
        await run.engine.aclose()


async def test_a_pipeline_limit_from_the_config_names_the_pipeline_that_reached_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    config = tmp_path / "sylk.toml"
    config.write_text("[budgets]\npipeline_tokens = 150\n")
    run = BudgetRun(data_dir, workspace, config)
    try:
        sid = await run.session_with_plan()  # the Architect's calls are in no pipeline
        await run.approve_and_answer(sid)
        asked = await answer_budget(run, "continue:1000")
        assert asked.question.title == "Budget reached: pipeline p1/e1 tokens"
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert len(budget_questions(run)) == 1  # e2's pipeline stayed under the new limit
        shown = (await say(run.engine, sid, "/budget"))["text"]
        assert "each pipeline      1,000 tokens and no cost limit" in shown
        assert "p1/e1: 300 tokens" in shown and "p1/e2: 300 tokens" in shown
    finally:
        await run.engine.aclose()


async def test_a_sessions_limits_survive_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = (await run.engine.ensure_session()).id
        await say(run.engine, sid, "/budget session cost 2.50")
        await say(run.engine, sid, "/budget pipeline tokens 50k")
    finally:
        await run.engine.aclose()
    again = BudgetRun(data_dir, workspace)
    try:
        shown = (await say(again.engine, sid, "/budget"))["text"]
        assert "session cost       $0.00 of $2.50" in shown
        assert "each pipeline      50,000 tokens and no cost limit" in shown
        await say(again.engine, sid, "/budget off")
        assert "(off: no limits)" in (await say(again.engine, sid, "/budget"))["text"]
    finally:
        await again.engine.aclose()


@pytest.mark.parametrize(
    "line",
    ["/budget session tokens lots", "/budget session tokens -5", "/budget weekly tokens 5",
     "/budget session cost nan", "/budget session tokens 1e400"],
)  # fmt: skip
async def test_bad_budget_input_is_a_typed_error_naming_the_usage(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = (await run.engine.ensure_session()).id
        reply = await say(run.engine, sid, line)
        assert reply["error"] == "BudgetUsageError"
        assert "/budget session|pipeline tokens|cost N|none" in reply["text"]
        assert "budget" not in run.engine.get_session(sid).metadata  # nothing was set
    finally:
        await run.engine.aclose()
