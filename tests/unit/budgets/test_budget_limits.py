"""A session's limits are its own over the config's (``/budget off``: none at all), and
an answer to a budget question is a new limit only when it leaves room to go on."""

from __future__ import annotations

import pytest

from backend.budgets import effective_limits, with_limit, without_limits
from backend.budgets.guard import Reached, parse_new_limit, question_for
from backend.config.budgets import BudgetLimits

CONFIG = BudgetLimits(session_tokens=1000, pipeline_cost_usd=0.5)


def test_a_sessions_own_limit_wins_and_the_others_come_from_the_config() -> None:
    own = {"budget": with_limit({}, "session", "tokens", 5000)}
    assert effective_limits(CONFIG, own) == BudgetLimits(session_tokens=5000, pipeline_cost_usd=0.5)
    lifted = {"budget": with_limit(own, "pipeline", "cost", None)}
    assert effective_limits(CONFIG, lifted).pipeline_cost_usd is None
    assert effective_limits(CONFIG, {"budget": without_limits()}).empty
    assert effective_limits(CONFIG, {}) == CONFIG


def test_a_hand_edited_limit_that_does_not_validate_leaves_the_configs() -> None:
    assert effective_limits(CONFIG, {"budget": {"session_tokens": -3}}) == CONFIG
    assert effective_limits(CONFIG, {"budget": "lots"}) == CONFIG


REACHED = Reached("session", "tokens", 1000, 1200, None)


@pytest.mark.parametrize(
    ("answer", "limit"),
    [("continue:2000", 2000.0), ("5,000", 5000.0), ("continue:1100", None), ("nan", None),
     ("inf", None), ("more please", None), ("continue:1200", None)],
)  # fmt: skip
def test_a_new_limit_must_leave_room_above_what_was_used(answer: str, limit: float | None) -> None:
    assert parse_new_limit(answer, REACHED) == limit


def test_the_question_offers_twice_and_four_times_the_limit_or_stop() -> None:
    question = question_for(Reached("pipeline", "cost", 0.5, 0.61, "p1/e2"))
    assert question.title == "Budget reached: pipeline p1/e2 cost"
    assert [(o.value, o.recommended) for o in question.options] == [
        ("continue:1.00", True),
        ("continue:2.00", False),
        ("stop", False),
    ]
    assert question.prompt.startswith("pipeline p1/e2 cost: $0.61 used of $0.50")
