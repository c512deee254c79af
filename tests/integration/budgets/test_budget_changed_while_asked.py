"""A limit changed by ``/budget`` while its budget question is open withdraws that
question (answering it later changes nothing, so the newer limit stands) and the
paused call goes on under the new limit, or asks anew when the new one is reached too;
a typed new limit (``2k``) is read as the engine reads ``/budget``'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.budgets.question import BudgetQuestion
from backend.events import QuestionSettled
from backend.orchestration import DagStatus
from tests.integration.budgets.budget_runs import (
    BudgetRun,
    answer_budget,
    budget_questions,
    budget_script,
)
from tests.integration.plans.conftest import say
from tests.support.polling import until


async def test_a_limit_raised_by_command_withdraws_the_question_and_the_work_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/budget session tokens 450")
        await run.approve_and_answer(sid)
        await until(lambda: budget_questions(run), what="the budget question")
        asked = budget_questions(run)[0]
        assert isinstance(asked.question, BudgetQuestion)
        assert (asked.question.measure, asked.question.used) == ("tokens", 500.0)

        await say(run.engine, sid, "/budget session tokens 5000")
        settled = [e for e in run.events if isinstance(e, QuestionSettled)]
        assert any(e.question_id == asked.question_id and e.withdrawn for e in settled)
        # The dialog's late answer finds nothing to answer: the newer limit stands.
        assert not run.engine.answer_question(asked.question_id, "continue:900")

        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert len(budget_questions(run)) == 1
        shown = await say(run.engine, sid, "/budget")
        assert "session tokens     900 tokens of 5,000 tokens" in shown["text"]
        notices = await run.notices(sid)
        assert any(n.startswith("↻ Budget question withdrawn") for n in notices)
    finally:
        await run.engine.aclose()


async def test_a_limit_changed_to_one_still_reached_asks_again_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    budget_script(tmp_path / "s.json", monkeypatch, workspace)
    run = BudgetRun(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/budget session tokens 450")
        await run.approve_and_answer(sid)
        await until(lambda: budget_questions(run), what="the budget question")
        await say(run.engine, sid, "/budget session tokens 480")  # still under the 500 used
        again = await answer_budget(run, "continue:2k", nth=2)
        assert again.question.prompt.startswith("session tokens: 500 tokens used of 480")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        shown = await say(run.engine, sid, "/budget")
        assert "session tokens     900 tokens of 2,000 tokens" in shown["text"]
    finally:
        await run.engine.aclose()
