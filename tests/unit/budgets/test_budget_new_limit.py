"""A new limit typed in the budget question reads as ``/budget`` reads one (``2k``,
``1.5M``, ``$3.50``) and must leave room above the use; else a typed error says why."""

from __future__ import annotations

import pytest

from backend.budgets.budget_dsl import BudgetUsageError
from backend.budgets.guard import Reached, question_for
from backend.budgets.question import read_new_limit
from backend.errors import ErrorKind


@pytest.mark.parametrize(
    ("typed", "measure", "limit"),
    [("2000", "tokens", 2000.0), ("2k", "tokens", 2000.0), ("1.5M", "tokens", 1_500_000.0),
     ("continue:3k", "tokens", 3000.0), ("$3.50", "cost", 3.5), ("3.5", "cost", 3.5)],
)  # fmt: skip
def test_a_typed_limit_reads_as_budget_reads_it(typed: str, measure: str, limit: float) -> None:
    assert read_new_limit(typed, measure, 1200 if measure == "tokens" else 1.0) == limit  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("typed", "why"),
    [("1000", "above the 1,200 tokens used, not 1,000 tokens"), ("1.2k", "above the 1,200"),
     ("lots", "'lots' is not a tokens limit"), ("", "type a new tokens limit above 1,200"),
     ("none", "a new limit is a number"), ("1.5", "whole number"), ("-3", "positive")],
)  # fmt: skip
def test_a_limit_with_no_room_or_no_number_says_why(typed: str, why: str) -> None:
    with pytest.raises(BudgetUsageError) as caught:
        read_new_limit(typed, "tokens", 1200)
    assert why in str(caught.value)
    assert caught.value.error_kind is ErrorKind.INVALID


def test_the_question_carries_what_a_dialog_checks_and_answers_with() -> None:
    question = question_for(Reached("session", "cost", 1.0, 1.25, None))
    assert (question.measure, question.used, question.limit_label) == ("cost", 1.25, "session cost")
    assert question.answer_for(question.check_limit("$3.50")) == "continue:3.50"
    assert question.answer_for(3.125) == "continue:3.125"
