"""The model's part of a pipeline's checks (issue 13), on a real engine with the scripted
model and Sylk's own ruff and pytest: a compliance criterion judged "not met" goes back
to the engineer, who fixes it; a code change without tests gets tests written by the
engineer, which really run; with no model, neither happens and the notes say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.engine.plan_runs.pipeline_work import pipeline_desk
from backend.pipelines.checks import IssueCategory
from backend.pipelines.context import PipelineContext
from backend.pipelines.pipeline_checks import SandboxedChecks
from backend.team.model_checks import (
    NO_MODEL_COMPLIANCE,
    NO_MODEL_TESTS,
    ModelChecks,
    PipelineSeat,
)
from tests.integration.pipelines.conftest import Project
from tests.integration.team.session_qa_runs import (
    FLAGS,
    FLAGS_TEST,
    QaRun,
    architect_proposes,
    engineer_fixes,
    engineer_writes,
    node,
    plan,
)

CRITERION = "VERBOSE defaults to False"
BOOL_TEST = (
    "from pkg.flags import VERBOSE\n\n\ndef test_flag_is_a_bool() -> None:\n"
    "    assert isinstance(VERBOSE, bool)\n"
)
# what the engineer's next request says (the feedback line), and the test-writing request
FEEDBACK = (
    f"compliance: not met: {CRITERION}: pkg/flags.py sets it True (suggestion: set VERBOSE = False)"
)
WRITE_TESTS = "Write tests for task e1: add a VERBOSE flag"


def judged(met: bool, why: str, **extra: str) -> str:
    return json.dumps({"criteria": [{"criterion": CRITERION, "met": met, "why": why, **extra}]})


def with_criteria(task: dict[str, Any]) -> dict[str, Any]:
    return task | {"context": {"compliance_criteria": [CRITERION]}}


async def test_a_criterion_not_met_goes_back_to_the_engineer_who_fixes_it(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_met = judged(False, "pkg/flags.py sets it True", file="pkg/flags.py",
                     suggestion="set VERBOSE = False")  # fmt: skip
    turns = [
        *architect_proposes(plan(with_criteria(node("e1", "add a VERBOSE flag")))),
        *engineer_writes({"pkg/flags.py": "VERBOSE = True\n", "tests/test_flags.py": BOOL_TEST}),
        # ruff passes: the inspector judges the diff (it is in the request)
        {"expect": "+VERBOSE = True", "text": not_met},
        *engineer_fixes("pkg/flags.py", "True", "False", expect=FEEDBACK),
        {"expect": "Compliance check of task e1 (loop 2)", "text": judged(True, "it is False")},
    ]
    run = QaRun(data_dir, workspace, monkeypatch, turns, assume_yes=True)
    try:
        sid = await run.session()
        await run.say(sid, "@architect add a VERBOSE flag")
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert (workspace / "pkg" / "flags.py").read_text() == "VERBOSE = False\n"
        [task] = pipeline_desk(run.parts).finished(sid)
        context = task.pipeline.context
        assert context.loop == 2 and context.notes == []
        first, second = context.inspector_feedback
        [issue] = first.issues
        assert (issue.category, issue.file, issue.tool) == (
            IssueCategory.COMPLIANCE, "pkg/flags.py", "inspector (model)"
        )  # fmt: skip
        assert not first.passed and second.passed
        assert [f.tests_run for f in context.tester_feedback] == [1]  # its own test ran
    finally:
        await run.aclose()


async def test_a_code_change_without_tests_gets_tests_the_engineer_writes_and_they_run(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [
        *architect_proposes(plan(node("e1", "add a VERBOSE flag, off by default"))),
        *engineer_writes({"pkg/flags.py": FLAGS}),
        # No test covers pkg/flags.py: at the first test stage the engineer writes one,
        # in the task's own conversation (its request is in the text).
        *engineer_writes({"tests/test_flags.py": FLAGS_TEST}, expect=WRITE_TESTS),
    ]
    run = QaRun(data_dir, workspace, monkeypatch, turns, assume_yes=True)
    try:
        sid = await run.session()
        await run.say(sid, "@architect add a VERBOSE flag")
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert (workspace / "tests" / "test_flags.py").read_text() == FLAGS_TEST
        [task] = pipeline_desk(run.parts).finished(sid)
        context = task.pipeline.context
        assert context.modified_files == ["pkg/flags.py"]
        assert context.created_files == ["tests/test_flags.py"]
        [tests] = context.tester_feedback
        assert tests.passed and (tests.tests_run, tests.tests_passed) == (1, 1)  # real pytest
        assert task.reports.tests is not None and task.reports.tests.passed == 1
        assert context.notes == []
    finally:
        await run.aclose()


async def test_without_an_inspector_model_compliance_is_not_checked_and_the_notes_say_so(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the engineer has a model: no inspector turn may happen (the script has none).
    turns = engineer_writes({"pkg/flags.py": "VERBOSE = True\n", "tests/test_flags.py": BOOL_TEST})
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True, assume_yes=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(with_criteria(node("e1", "add a VERBOSE flag"))))
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        [task] = pipeline_desk(run.parts).finished(sid)
        assert task.pipeline.context.notes == [NO_MODEL_COMPLIANCE]
        assert task.pipeline.context.loop == 1
        [said] = await run.summaries(sid)
        assert NO_MODEL_COMPLIANCE in json.dumps(said["summary"])  # deferred, not passed
    finally:
        await run.aclose()


async def test_with_no_model_neither_check_asks_anyone_and_the_notes_say_so(
    project: Project,
) -> None:
    project.fix()  # the tools pass: only the model's part is left
    (project.root / "pkg" / "flags.py").write_text(FLAGS)  # a source file no test covers
    context = PipelineContext(task_id="q1", task_prompt="add a flag",
                              compliance_criteria=[CRITERION])  # fmt: skip

    async def nobody(session_id: str, decision: object) -> Any:
        raise AssertionError(f"no turn may be asked without a model: {decision}")

    tools = SandboxedChecks(project.root, project.discovered, project.confinement,
                            path_env=project.path_env)  # fmt: skip
    seat = PipelineSeat("s1", project.root, context, nobody, "add a flag")

    async def no_patch(session_id: str, workspace: Path) -> str:
        raise AssertionError("no diff is read without a model")

    checks = ModelChecks(tools, seat, has_model=lambda role: False, patch=no_patch)
    files = ["pkg/flags.py"]
    inspected = await checks.inspect(files)
    assert inspected.clean and inspected.tools_run  # ruff ran; no compliance issue added
    tested = await checks.test(files)
    assert tested.status == "no_tests"
    assert context.notes == [NO_MODEL_COMPLIANCE, NO_MODEL_TESTS]
    assert context.created_files == [] and not (project.root / "tests" / "test_flags.py").exists()
