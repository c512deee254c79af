"""The bundled handoff state is read from the pipeline's own context, deterministically."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.pipelines import context as pipeline_context
from backend.pipelines.checks import InspectionIssue, TestFailure
from backend.pipelines.checks.results import IssueCategory
from backend.pipelines.context import InspectorFeedback, PipelineContext
from backend.pipelines.handoff.chain import HandoffChains, pipeline_id
from backend.pipelines.handoff.state import bundle, handoff_prompt

UNUSED = InspectionIssue(file="pkg/a.py", line=1, category=IssueCategory.LINT, code="F401",
                         message="os imported but unused", tool="ruff")  # fmt: skip
BAD_TYPE = InspectionIssue(file="pkg/b.py", line=7, category=IssueCategory.TYPE,
                           code="return-value", message="int expected", tool="mypy")  # fmt: skip


def context() -> PipelineContext:
    return PipelineContext(
        task_id="e1",
        task_prompt="add mul",
        modified_files=["pkg/a.py", "pkg/b.py"],
        created_files=["tests/test_mul.py"],
        engineer_texts=["Wrote mul.", "Fixed the import."],
        notes=["tester failures ignored by the user at loop 1"],
        inspector_feedback=[
            InspectorFeedback(loop=1, passed=False, issues=[UNUSED, BAD_TYPE]),
            InspectorFeedback(loop=2, passed=False, issues=[BAD_TYPE], text="int expected"),
        ],
        tester_feedback=[
            pipeline_context.TesterFeedback(
                loop=2,
                passed=False,
                status="failed",
                text="test_mul failed",
                tests_run=2,
                tests_passed=1,
                failures=[TestFailure(name="tests/test_mul.py::test_mul", message="assert 5 == 6")],
            ),
        ],
        loop=2,
    )


def test_bundle_collects_the_three_roles_state() -> None:
    h = bundle(context(), "add mul (verbatim)", session_id="s", old_pipeline_id="e1/p1",
               index=1, reason="engineer_context_95%", dag_id="p1",
               now=datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
    e, i, t = h.engineer_state, h.inspector_state, h.tester_state
    assert e.original_prompt == "add mul (verbatim)"
    assert e.accomplished == ["turn 1: Wrote mul.", "turn 2: Fixed the import."]
    assert [(f.path, f.operation) for f in e.files_changed] == [
        ("tests/test_mul.py", "created"), ("pkg/a.py", "modified"), ("pkg/b.py", "modified"),
    ]  # fmt: skip
    assert e.remaining[0] == "answer the latest check feedback: test_mul failed"
    assert "ignored by the user" in e.context_notes
    # The unused import was fixed between the loops; the type error remains, an error.
    assert [(f.file, f.line) for f in i.fixes_completed] == [("pkg/a.py", 1)]
    assert [(f.file, f.line, f.priority) for f in i.fixes_remaining] == [("pkg/b.py", 7, "high")]
    assert i.validation_state == {"lint": True, "type": False, "overall": False}
    assert [x.file for x in t.tests_created] == ["tests/test_mul.py"]
    assert [(r.tests_passed, r.tests_run) for r in t.test_results] == [(1, 2)]
    assert [(f.test, f.error) for f in t.failure_descs] == [
        ("tests/test_mul.py::test_mul", "assert 5 == 6")
    ]
    prompt = handoff_prompt(h)
    assert prompt.startswith("PIPELINE HANDOFF 1 (task e1, from e1/p1")
    assert prompt.endswith("## Original prompt (verbatim)\nadd mul (verbatim)")
    assert "[high] pkg/b.py:7 mypy return-value: int expected" in prompt


def test_the_chain_counts_handoffs_and_obeys_the_user() -> None:
    chains = HandoffChains()
    chain = chains.chain("s", "q1")
    assert chain.due(0.94) == "" and chain.due(0.95) == "engineer_context_95%"
    assert "follows the engineer's current or next turn" in chains.command(
        "s", "q1", "handoff", "Task q1"
    )
    assert chain.due(0.1) == "user_request"
    assert "handoff chain stopped" in chains.command("s", "q1", "handoff_stop", "Task q1")
    assert chain.due(0.99) == ""  # stopped: nothing is due, however full
    assert "stopped by you" in chains.command("s", "q1", "handoff", "Task q1")
    assert pipeline_id("q1", 0) == "q1/p1" and chains.chain("s", "q2") is not chain
