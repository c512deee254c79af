"""The seed's thresholds per role, the checkpoint shapes, and the offline extract."""

from __future__ import annotations

import pytest

from backend.knowledge.chronicle.models import Category
from backend.llm.types import ChatMessage
from backend.memory.extract import extract
from backend.memory.shapes import SHAPES, conform
from backend.memory.summaries import parse_summary, render
from backend.memory.thresholds import PLANS, plan_for


def test_the_thresholds_are_the_seeds() -> None:
    table = {r: (p.checkpoints, p.compact_at, p.category) for r, p in PLANS.items()}
    assert table["librarian"] == ((0.25, 0.5, 0.75), 0.75, Category.LIBRARIAN_CHECKPOINT)
    assert table["guide"] == ((0.5, 0.75, 0.9), 0.95, Category.GUIDE_CHECKPOINT)
    assert table["academic"] == ((0.85,), 0.95, Category.ACADEMIC_RESEARCH_PAPER)
    assert table["architect"] == ((0.85,), 0.95, Category.ARCHITECT_WORKFLOW)
    assert table["inspector"] == ((0.85,), 0.95, Category.INSPECTOR_FINDINGS)
    assert table["tester"] == ((0.85,), 0.95, Category.TESTER_SUMMARY)
    assert PLANS["engineer"].handoff and PLANS["engineer"].compact_at == 0.95
    assert plan_for("an-mcp-agent").compact_at == 0.95  # nothing overflows unmetered


def test_crossing_counts_each_level_once() -> None:
    plan = PLANS["librarian"]
    assert plan.crossed(0.30, frozenset()) == (0.25,)
    assert plan.crossed(0.80, frozenset({0.25})) == (0.5, 0.75)
    assert plan.crossed(0.80, frozenset({0.25, 0.5, 0.75})) == ()
    assert not plan.compacts(0.74) and plan.compacts(0.75)


def test_a_models_checkpoint_is_kept_to_the_shape() -> None:
    found = conform(
        "inspector",
        {"issues_found": "three", "issues_resolved": -1, "checks_performed": ["ruff"],
         "extra": "x", "validation_state": {"lint": True}},
    )  # fmt: skip
    assert set(found) == set(SHAPES["inspector"])
    assert found["issues_found"] == 0 and found["issues_resolved"] == 0  # wrong type, negative
    assert found["checks_performed"] == ["ruff"] and found["validation_state"] == {"lint": True}


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"title": "T"}', {"title": "T"}),
        ('Here it is:\n```json\n{"title": "T"}\n```', {"title": "T"}),
        ('Sure! {"title": "T"} Hope it helps.', {"title": "T"}),
        ("[1, 2]", None),
        ("no json", None),
        ("{broken", None),
    ],
)
def test_a_reply_is_parsed_as_one_json_object(reply: str, parsed: object) -> None:
    assert parse_summary(reply) == parsed


def test_the_testers_extract_counts_results_and_finds_test_files() -> None:
    turns = [
        ChatMessage.user("run tests/test_app.py please"),
        ChatMessage.assistant("3 passed, 1 failed, 2 skipped\nFAILED test_x: assert 1 == 2"),
    ]
    found = extract("tester", turns)
    assert (found["pass_count"], found["fail_count"], found["skip_count"]) == (3, 1, 2)
    assert found["tests_created"] == [{"file": "tests/test_app.py"}]
    assert found["failure_descriptions"]
    assert render("tester", found, "extract").startswith("(an extract")


def test_an_extract_of_nothing_says_so() -> None:
    assert "nothing to record" in render("architect", extract("architect", []), "extract")
