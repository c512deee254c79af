"""The user may take longer to answer than a task's time limit: while a plan waits on
the user (here a budget), its tasks' clocks stop, so the task is not timed out and run
again when the answer comes; it goes on with the time it had left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.budgets import spend_of
from backend.orchestration import DagStatus
from tests.integration.budgets.budget_runs import (
    BudgetRun,
    answer_budget,
    budget_questions,
    budget_script,
)
from tests.integration.plans.conftest import say
from tests.support.polling import until

LIMIT_MS = 1500  # per loop of an engineer's pipeline: 4.5 s an attempt


async def test_a_budget_answered_after_the_task_limit_does_not_time_the_task_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace, timeout_ms=LIMIT_MS)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/budget session tokens 450")
        await run.approve_and_answer(sid)
        await until(lambda: bool(budget_questions(run)), what="the budget question")
        await asyncio.sleep(3 * LIMIT_MS / 1000 + 1)  # the user thinks longer than the limit
        await answer_budget(run, "continue:2000")

        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        for node_id in ("t1", "e1", "e2"):  # no timeout, no retry
            assert run.node_moves(node_id) == ["pending", "running", "passed"], node_id
        spent = await spend_of(run.parts.archive, sid)
        assert (spent.calls, spent.tokens) == (9, 900)  # nothing played twice
    finally:
        await run.engine.aclose()
