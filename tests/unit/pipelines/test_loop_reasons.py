"""A pipeline going back to its engineer says why: the check and its first finding."""

from __future__ import annotations

from typing import Any

from backend.pipelines.checks import (
    InspectionIssue,
    InspectionReport,
    IssueCategory,
    TestFailure,
    TestReport,
    TestRunStatus,
)
from backend.pipelines.context import EngineerResult, PipelineContext, PipelineEvent
from backend.pipelines.feedback import feedback_from_inspection, feedback_from_tests, first_finding
from backend.pipelines.pipeline import Pipeline

UNUSED = InspectionIssue(file="greet/cli.py", line=3, category=IssueCategory.LINT, code="F401",
                         message="`os` imported but unused", tool="ruff")  # fmt: skip
VERBOSE = TestFailure(name="tests/test_cli.py::test_verbose", file="tests/test_cli.py", line=9,
                      kind="assertion", message="assert 'hi' == 'Hello'\nmore")  # fmt: skip
FAILED = TestReport(framework="pytest", status=TestRunStatus.FAILED, failed=1, failures=[VERBOSE])
PASSED = TestReport(framework="pytest", status=TestRunStatus.PASSED, passed=1)


class Reports:
    """The checks' answers in order: lint first, then a failed test run, then clean."""

    def __init__(self) -> None:
        self.inspections = [InspectionReport(issues=[UNUSED]), InspectionReport()]
        self.tests = [FAILED, PASSED]

    async def inspect(self, files: Any) -> InspectionReport:
        return self.inspections.pop(0) if len(self.inspections) > 1 else self.inspections[0]

    async def test(self, files: Any) -> TestReport:
        return self.tests.pop(0) if len(self.tests) > 1 else self.tests[0]


async def engineer(context: PipelineContext) -> EngineerResult:
    return EngineerResult(text="done", modified_files=["greet/cli.py"])


async def fail(context: PipelineContext, reason: str) -> str:
    return "fail"


async def test_each_new_loop_names_the_check_and_its_first_finding() -> None:
    events: list[PipelineEvent] = []
    run = Pipeline(PipelineContext(task_id="e1", task_prompt="add --verbose"), engineer=engineer,
                   checks=Reports(), decide=fail, on_event=events.append)  # fmt: skip
    result = await run.run()
    assert result.success, result.reason
    running = [(e.loop, e.detail) for e in events if e.state == "running"]
    assert running == [
        (1, "engineer turn 1"),
        (2, "the inspection failed: greet/cli.py:3: F401 `os` imported but unused"),
        (3, "the tests failed: tests/test_cli.py:9: test_verbose: assert 'hi' == 'Hello'"),
    ]


def test_a_long_list_is_one_line_saying_how_many_more() -> None:
    many = feedback_from_inspection(InspectionReport(issues=[UNUSED] * 3), loop=1)
    assert first_finding(many) == "greet/cli.py:3: F401 `os` imported but unused (and 2 more)"
    long = UNUSED.model_copy(update={"message": "x" * 500})
    said = first_finding(feedback_from_inspection(InspectionReport(issues=[long]), loop=1))
    assert len(said) == 160 and said.endswith("…")


def test_a_test_run_without_failures_says_its_first_line() -> None:
    hung = TestReport(framework="pytest", status=TestRunStatus.TIMED_OUT, detail="test_x hung")
    assert first_finding(feedback_from_tests(hung, loop=1)) == "test_x hung"
