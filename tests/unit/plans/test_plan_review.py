"""The plan review's text and answers, and the /plan command's parsing."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing import dsl
from backend.plans import load_plan
from backend.plans.review import (
    MAX_ANSWER,
    ReviewAnswer,
    parse_answer,
    render_plan,
    review_question,
)


def _document() -> dict[str, object]:
    return load_plan({"id": "p1", "prompt": "add a flag", "nodes": [
        {"id": "t1", "agent": "librarian", "prompt": "find the \x1b[2Jparser",
         "metadata": {"priority": "high", "file_operations": ["read"]}},
        {"id": "t2", "agent": "engineer", "prompt": "add it", "depends_on": ["t1"],
         "context": {"constraints": ["no new dependency"]}},
        {"id": "t3", "agent": "tester", "prompt": "test it", "depends_on": ["t1"]},
    ]}).document()  # fmt: skip


def test_the_review_shows_layers_nodes_and_policy_without_control_characters() -> None:
    text = render_plan(_document(), version=2, status="awaiting_approval")
    head = ["Plan p1 (version 2, awaiting approval)", "3 tasks in 2 layers", "Request: add a flag"]
    assert text.splitlines()[:3] == head
    assert "\x1b" not in text and "find the [2Jparser" in text
    assert "Layer 2 (together)" in text and "  t2  [engineer]  add it" in text
    assert "after t1 · must: no new dependency" in text
    assert "files: read · priority high" in text
    assert text.endswith("Policy: at most 4 at once · stop at the first failure · retry 2x, "
                         "backoff 2000 ms")  # fmt: skip


def test_the_question_carries_the_review() -> None:
    question = review_question(_document(), version=1, status="draft", explanation="because")
    assert question.plan is not None and question.plan.plan_id == "p1"
    assert question.plan.explanation == "because"
    assert [o.value for o in question.options] == ["approve", "modify", "why"]


@pytest.mark.parametrize(("value", "expected"), [
    ("approve", ReviewAnswer("approve")),
    ("modify: also X ", ReviewAnswer("modify", "also X")),
    ("why:why three?", ReviewAnswer("why", "why three?")),
    ("modify:", ReviewAnswer("later")),  # nothing to change is no answer
    ("approve:sneaky", ReviewAnswer("later")),
    ("yes", ReviewAnswer("later")),
    (None, ReviewAnswer("later")),
])  # fmt: skip
def test_answers(value: str | None, expected: ReviewAnswer) -> None:
    assert parse_answer(value) == expected


def test_a_long_answer_is_bounded() -> None:
    assert len(parse_answer("why:" + "x" * (MAX_ANSWER * 2)).text) == MAX_ANSWER


def test_plan_command_parsing() -> None:
    assert dsl.parse("/plan") == dsl.PlanCommand("list")
    assert dsl.parse("/plans list") == dsl.PlanCommand("list")
    assert dsl.parse("/plan approve p1") == dsl.PlanCommand("approve", "p1")
    assert dsl.parse("/plan SHOW p1") == dsl.PlanCommand("show", "p1")
    for bad in ("/plan approve", "/plan launch p1", "/plan approve p1 p2"):
        with pytest.raises(CommandError, match="show, approve or reject"):
            dsl.parse(bad)
    assert "/plan" in dsl.help_text(None) and "/plan" in dsl.help_text("plan")
