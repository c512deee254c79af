"""The pipeline's state machine with hand-made reports: messages, limits, errors, cancels."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from backend.errors import SylkError
from backend.messages import Message, MessageType
from backend.pipelines.bus import PipelineClosedError
from backend.pipelines.checks import (
    InspectionIssue,
    InspectionReport,
    IssueCategory,
    TestFailure,
    TestReport,
    TestRunStatus,
    ToolRun,
    ToolRunStatus,
)
from backend.pipelines.context import EngineerResult, PipelineContext, PipelineState
from backend.pipelines.feedback import MAX_LINES, feedback_from_inspection, feedback_from_tests
from backend.pipelines.pipeline import Pipeline, PipelineError
from backend.pipelines.pipeline_checks import SandboxedChecks
from backend.workspace.confinement import Confinement

CLEAN = InspectionReport()
PASSED = TestReport(framework="pytest", status=TestRunStatus.PASSED, passed=1)
LINT = InspectionReport(
    issues=[
        InspectionIssue(
            file="a.py", line=3, category=IssueCategory.LINT, code="F401", message="x", tool="ruff"
        )
    ]
)


@dataclass
class ReportChecks:
    """Hands back the given reports in turn (the last one again once they run out)."""

    inspections: list[InspectionReport]
    tests: list[TestReport] = field(default_factory=lambda: [PASSED])
    inspected: list[list[str]] = field(default_factory=list)

    async def inspect(self, files: Any) -> InspectionReport:
        self.inspected.append(list(files))
        return self.inspections[min(len(self.inspected), len(self.inspections)) - 1]

    async def test(self, files: Any) -> TestReport:
        return self.tests.pop(0) if len(self.tests) > 1 else self.tests[0]


@dataclass
class Engineer:
    seen: list[PipelineContext] = field(default_factory=list)
    files: list[str] = field(default_factory=lambda: ["a.py"])
    later_files: list[str] = field(default_factory=list)  # added from the second turn on
    gate: asyncio.Event | None = None  # the second turn waits for it
    second_turn: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, context: PipelineContext) -> EngineerResult:
        self.seen.append(context.model_copy(deep=True))
        if len(self.seen) == 1:
            return EngineerResult(text="done", modified_files=self.files)
        self.second_turn.set()
        if self.gate is not None:
            await self.gate.wait()
        return EngineerResult(text="done", modified_files=[*self.files, *self.later_files])


async def fail(context: PipelineContext, reason: str) -> str:
    return "fail"


def pipeline(checks: Any, engineer: Engineer, **kw: Any) -> Pipeline:
    context = PipelineContext(task_id="t", task_prompt="p")
    return Pipeline(context, engineer=engineer, checks=checks, decide=fail, **kw)


async def test_a_user_message_on_the_bus_reaches_the_next_turn() -> None:
    engineer = Engineer()
    run = pipeline(ReportChecks([LINT, CLEAN]), engineer)
    await run.bus.send(
        Message[Any](
            session_id=run.bus.session_id,
            source="user",
            target="engineer",
            type=MessageType.USER_INPUT,
            payload={"text": "focus on errors"},
        )
    )
    result = await run.run()
    assert result.state is PipelineState.COMPLETED
    assert engineer.seen[0].user_messages == ["focus on errors"]
    assert engineer.seen[1].inspector_feedback[0].issues == LINT.issues
    with pytest.raises(PipelineClosedError):
        await run.bus.send_inspector_feedback({})


async def test_feedback_files_accumulate_over_turns() -> None:
    checks = ReportChecks([LINT, CLEAN])
    await pipeline(checks, Engineer(later_files=["b.py"])).run()
    assert checks.inspected == [["a.py"], ["a.py", "b.py"]]


async def test_a_bad_decision_fails_with_a_reason() -> None:
    async def maybe(context: PipelineContext, reason: str) -> str:
        return "perhaps"

    context = PipelineContext(task_id="t", task_prompt="p")
    run = Pipeline(
        context, engineer=Engineer(), checks=ReportChecks([LINT]), decide=maybe, max_loops=1
    )
    result = await run.run()
    assert result.state is PipelineState.FAILED
    assert result.reason.startswith("no valid decision ('perhaps')")


async def test_a_path_outside_the_workspace_fails_typed(tmp_path: Path) -> None:
    checks = SandboxedChecks(tmp_path, [], Confinement.of(tmp_path))
    run = pipeline(checks, Engineer(files=["../../etc/passwd"]))
    result = await run.run()
    assert result.state is PipelineState.FAILED
    assert "cannot check '../../etc/passwd'" in result.reason


async def test_an_engineer_error_fails_typed() -> None:
    async def broken(context: PipelineContext) -> EngineerResult:
        raise SylkError("the model is unavailable")

    context = PipelineContext(task_id="t", task_prompt="p")
    run = Pipeline(context, engineer=broken, checks=ReportChecks([CLEAN]), decide=fail)
    result = await run.run()
    assert (result.state, result.reason) == (PipelineState.FAILED, "the model is unavailable")


async def test_cancel_during_a_turn_and_before_a_run() -> None:
    engineer = Engineer(gate=asyncio.Event())
    run = pipeline(ReportChecks([LINT]), engineer)
    task = asyncio.create_task(run.run())
    await engineer.second_turn.wait()
    assert run.cancel() is True
    result = await task
    assert (result.state, result.reason, result.loops_used) == (
        PipelineState.FAILED,
        "interrupted",
        2,
    )
    assert not task.cancelled()

    idle = pipeline(ReportChecks([CLEAN]), Engineer())
    idle.cancel()
    assert (await idle.run()).reason == "interrupted"
    with pytest.raises(PipelineError):
        await idle.run()


async def test_a_cancel_from_outside_propagates_and_still_ends_failed() -> None:
    engineer = Engineer(gate=asyncio.Event())
    run = pipeline(ReportChecks([LINT]), engineer)
    task = asyncio.create_task(run.run())
    await engineer.second_turn.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (run.state, run.reason) == (PipelineState.FAILED, "interrupted")


def test_max_loops_below_one_is_refused() -> None:
    with pytest.raises(PipelineError):
        pipeline(ReportChecks([CLEAN]), Engineer(), max_loops=0)


def test_feedback_names_crashed_tools_and_is_cut() -> None:
    crashed = ToolRun(
        tool="mypy", argv=[], exit_code=2, duration_ms=1, status=ToolRunStatus.CRASHED
    )
    many = [LINT.issues[0].model_copy(update={"line": n}) for n in range(1, 60)]
    feedback = feedback_from_inspection(InspectionReport(issues=many, tools_run=[crashed]), 1)
    lines = feedback.text.splitlines()
    assert lines[1].startswith("- a.py:1: [ruff F401] lint: x")
    assert lines[-1] == f"- ... and {60 - MAX_LINES} more"
    assert not feedback.passed
    only_crash = feedback_from_inspection(InspectionReport(tools_run=[crashed]), 1)
    assert "- mypy crashed" in only_crash.text


def test_tester_feedback_passes_with_no_tests_and_reports_a_timeout() -> None:
    none = TestReport(framework="pytest", status=TestRunStatus.NO_TESTS, detail="none relevant")
    assert feedback_from_tests(none, 1).passed
    hung = TestReport(
        framework="pytest",
        status=TestRunStatus.TIMED_OUT,
        failures=[TestFailure(name="t::slow", file="t.py", kind="timeout")],
    )
    feedback = feedback_from_tests(hung, 2)
    assert not feedback.passed
    assert "- t.py: t::slow (timeout)" in feedback.text
