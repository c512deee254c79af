"""Skills of the planning and quality agents: Architect, Orchestrator, Inspector, Tester.

Real handlers: ``tester.tests.run`` (a subprocess in the workspace) and, where the
engine wires its plan desk, the Architect's ``architect.plan.create|approve|modify``
(:mod:`backend.skills.builtin.architect`), and the Inspector's style and full checks
(:mod:`backend.engine.quality_work` passes ``inspect``), and, where an engine wires them,
the Orchestrator's ops (:mod:`backend.skills.builtin.orchestrator`) and the Inspector's
and Tester's other ops (:mod:`backend.team.agent_ops.inspector_ops`,
:mod:`backend.team.agent_ops.tester_ops`,
installed by :func:`backend.engine.quality_work.install_quality_ops`), and the Architect's
``architect.dag.create_fix`` (:mod:`backend.team.fix_plans`). Without an engine,
and for the Architect's other ops, they are declared in full and fail with a typed
not-available error naming what will serve them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from backend.skills.builtin.architect import PlanWiring, plan_skills
from backend.skills.builtin.declare import CONTEXTUAL, CORE, WRITE, NoParams, Params, declare
from backend.skills.builtin.workspace import write as writes
from backend.skills.models import Guidance, Handler, Policy, Skill, SkillContext, SkillResult

PLANNER = "the Architect's DAG planner"
DESK = "the plan desk, which only an engine wires"
USER_EVENTS = "user questions as engine events the UI answers (approve, clarify)"
ORCHESTRATOR = "the Orchestrator (DAG execution)"
INSPECTOR = "the Inspector's validation pipeline"
TESTER = "the Tester's planning and failure analysis"


class PlanParams(Params):
    request: str = Field(min_length=1)
    constraints: list[str] = Field(default_factory=list)


class PlanRef(Params):
    plan_id: str


class ModifyParams(PlanRef):
    feedback: str


class ClarifyParams(Params):
    question: str
    options: list[str] = Field(default_factory=list)


class StatusParams(Params):
    message: str | None = Field(
        default=None, max_length=2000, description="a status note kept in the transcript"
    )


class FixParams(Params):
    issues: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(
        min_length=1, max_length=500, description="one finding a line: 'path:line: message'"
    )
    source: Literal["inspector", "tester"] = "inspector"


class InterruptParams(Params):
    # No "pause": the scheduler cannot hold new task starts while running ones finish
    # (backend.team.phase_talk); "resume" runs a stopped plan again, passed tasks kept.
    action: Literal["stop", "resume", "revise"]
    feedback: str = Field(default="", max_length=2000, description="revise: what to change")
    reason: str | None = None


class TaskRef(Params):
    task_id: str
    engineer: str | None = None


class FilesParams(Params):
    paths: list[str] = Field(default_factory=list, description="empty: the whole change")
    task_id: str | None = None


class TaskValidateParams(FilesParams):
    criteria: list[str] = Field(
        default_factory=list, description="compliance criteria, added to the task's own"
    )


class IssuesReportParams(Params):
    file: str | None = Field(default=None, description="only this file's issues")


class DeepParams(Params):
    paths: list[str] = Field(default_factory=list, description="folders or files; empty: all")
    max_files: int = Field(default=400, ge=1, le=2000, description="source files inspected")


class PathsParams(Params):
    paths: list[str] = Field(default_factory=list, description="empty: the session's changes")


class IssueParams(Params):
    issue: str = Field(min_length=1, description="a rule code (E501, arg-type) or issue text")


class FailureParams(Params):
    output: str = Field(min_length=1, description="the failing test output")


def _d(op: str, desc: str, params: Any, provider: str, **kw: Any) -> Skill:
    return declare(op, op.split(".", 1)[0], desc, params, provider=provider, **kw)


def architect_skills(plans: PlanWiring | None = None) -> list[Skill]:
    """The Architect's ops; the plan ops are real when the engine wires its plan desk."""
    if plans is not None:
        planning = plan_skills(plans)
    else:
        planning = [
            _d("architect.plan.create", "Create an implementation plan (a task DAG) from "
               "requirements.", PlanParams, DESK, tier=CORE, kind=WRITE, entry_point=True,
               tags=("plan", "implement", "build", "create", "design", "dag"),
               examples=[("plan a feature", {"request": "add login"})]),
            _d("architect.plan.approve", "Present a plan for user approval.", PlanRef,
               DESK, tier=CORE, tags=("approve", "review", "confirm"),
               examples=[("ask approval", {"plan_id": "p1"})]),
            _d("architect.plan.modify", "Modify an existing plan based on feedback.",
               ModifyParams, DESK, tier=CONTEXTUAL, kind=WRITE,
               tags=("change", "modify", "update plan"),
               examples=[("drop a step", {"plan_id": "p1", "feedback": "skip docs"})]),
        ]  # fmt: skip
    return [
        *planning,
        _d("architect.user.clarify", "Ask the user for clarification on requirements.",
           ClarifyParams, USER_EVENTS, tier=CORE, tags=("clarify", "unclear", "question", "ask"),
           examples=[("ask a choice", {"question": "Which DB?", "options": ["a", "b"]})]),
        _d("architect.status.update", "Provide execution status to the user: the phase, "
           "each task of the running plan, live pipelines, what waits on the user.",
           StatusParams, ORCHESTRATOR, tier=CORE, tags=("status", "progress", "update"),
           examples=[("status", {}), ("with a note", {"message": "e1 is slow: big file"})]),
        _d("architect.dag.create_fix", "Create a fix workflow (a plan, shown for approval) "
           "from Inspector or Tester corrections.", FixParams, PLANNER, tier=CONTEXTUAL, kind=WRITE,
           triggers=(r"\bfix", r"\bcorrect", r"\brepair", r"\bissue", r"\bfail"),
           tags=("fix", "correct", "repair", "corrections"),
           examples=[("fix lint issues", {"issues": ["E501 in a.py"]})]),
        _d("architect.execution.interrupt", "Handle a user interruption during execution: "
           "stop the running plan, resume a stopped one, or revise it with feedback.",
           InterruptParams, ORCHESTRATOR, tier=CONTEXTUAL, kind=WRITE,
           triggers=(r"\bstop\b", r"\bwait\b", r"\bhalt\b", r"\bresume\b"),
           tags=("stop", "resume", "revise", "interrupt"),
           examples=[("stop", {"action": "stop"}),
                     ("revise", {"action": "revise", "feedback": "also add X"})]),
    ]  # fmt: skip


def orchestrator_skills() -> list[Skill]:
    return [
        _d("orchestrator.dag.execute", "Execute an approved plan's task DAG.", PlanRef,
           ORCHESTRATOR, tier=CORE, kind=WRITE, entry_point=True,
           tags=("execute", "run", "dag", "workflow"),
           examples=[("run plan", {"plan_id": "p1"})],
           guidance=[("orchestrator.task.dispatch", "Hand a ready task to an engineer")]),
        _d("orchestrator.dag.status", "Status of a running DAG: tasks done, running, blocked.",
           PlanRef, ORCHESTRATOR, tier=CORE, tags=("status", "progress", "dag", "tasks"),
           examples=[("status of plan", {"plan_id": "p1"})]),
        _d("orchestrator.task.dispatch", "Dispatch a ready task to an engineer.", TaskRef,
           ORCHESTRATOR, kind=WRITE, searchable=False, tags=("dispatch", "assign", "task"),
           examples=[("dispatch", {"task_id": "t1"})]),
        _d("orchestrator.dag.cancel", "Cancel a running DAG and its tasks.", PlanRef,
           ORCHESTRATOR, kind=WRITE, destructive=True, tags=("cancel", "abort", "dag"),
           examples=[("cancel", {"plan_id": "p1"})]),
    ]  # fmt: skip


# The engine's inspection: (caller, files or [] for the session's changes, categories kept).
Inspect = Callable[[SkillContext, list[str], tuple[str, ...]], Awaitable[dict[str, Any]]]
STYLE = ("lint", "format")
EVERY_CHECK = ("lint", "format", "type")


def _inspecting(inspect: Inspect | None, categories: tuple[str, ...]) -> Handler | None:
    """A handler running the project's own checks (``categories``) through ``inspect``."""
    if inspect is None:
        return None

    async def handler(ctx: SkillContext, p: FilesParams) -> SkillResult:
        report = await inspect(ctx, p.paths, categories)
        guidance = [Guidance(op="inspector.issues.report",
                             prose="Report the issues found to the Architect")]  # fmt: skip
        return SkillResult(result=report, guidance=guidance if report["issues"] else [])

    return handler


def inspector_skills(inspect: Inspect | None = None) -> list[Skill]:
    """The Inspector's ops; with ``inspect`` (an engine's), style and full checks are real."""
    checks: dict[str, Any] = {"action": "command"} if inspect else {}
    return [
        _d("inspector.task.validate", "Validate a task's work: the project's checks on its "
           "files (a pipeline task's, or the named ones) and, with a model, its compliance "
           "criteria against the diff.", TaskValidateParams, INSPECTOR, tier=CORE,
           tags=("validate", "check", "verify", "task", "compliance"),
           examples=[("validate task", {"task_id": "t1"})]),
        _d("inspector.implementation.validate", "Full validation of an implementation: the "
           "project's linters, formatters and type checkers on the changed files, sandboxed.",
           FilesParams, INSPECTOR, tier=CORE, entry_point=True,
           handler=_inspecting(inspect, EVERY_CHECK), **checks,
           tags=("full validation", "complete check", "review", "type check"),
           examples=[("validate everything", {})]),
        _d("inspector.style.check", "Check code style compliance (lint, format) with the "
           "project's own linters and formatters, sandboxed.", FilesParams,
           INSPECTOR, tier=CORE, handler=_inspecting(inspect, STYLE), **checks,
           tags=("style", "lint", "format", "compliance"),
           examples=[("lint two files", {"paths": ["a.py", "b.py"]})]),
        _d("inspector.issues.report", "Report the issues (problems that need correcting) "
           "the session's latest inspection found, grouped by file with severity counts.",
           IssuesReportParams, INSPECTOR, tier=CORE,
           tags=("issues", "problems", "corrections", "findings"),
           examples=[("report", {})]),
        _d("inspector.analysis.deep", "Deep analysis of the whole project, not just the "
           "changes: every discovered lint, format and type check (security, race and leak "
           "rules as the project's linters enable them), sandboxed.", DeepParams,
           INSPECTOR, tier=CONTEXTUAL,
           triggers=(r"\brace\b", r"\bleak", r"\bdeadlock", r"\bsecurity\b", r"\bdeep\b"),
           tags=("race", "leak", "deadlock", "security", "whole project"),
           examples=[("deep check", {"paths": ["server.py"]})]),
        _d("inspector.issue.explain", "Explain an issue or rule code to the user: from the "
           "tool itself, Sylk's table or the model.", IssueParams, INSPECTOR,
           tier=CONTEXTUAL, triggers=(r"\bexplain\b", r"\bwhy\b", r"what's wrong"),
           tags=("explain", "why", "what's wrong", "rule"),
           examples=[("explain", {"issue": "E501"})]),
    ]  # fmt: skip


def tester_skills() -> list[Skill]:
    return [
        declare("tester.tests.run", "tester", "Execute the test suite (or given tests) in the "
                "workspace; returns pass/fail, exit code and output. A dry run unless dry_run "
                "is false.", writes.RunTestsParams, writes.run_tests, tier=CORE, kind=WRITE,
                destructive=True, supports_dry_run=True, scopes=("shell",), entry_point=True,
                action="command",
                tags=("run tests", "execute tests", "test", "pytest", "suite"),
                examples=[("run all tests", {}),
                          ("run one file", {"paths": ["tests/test_app.py"]})],
                policy=Policy(do=["run the narrowest tests first"],
                              edge_cases=["a timeout kills the test process group"])),
        _d("tester.plan.create", "Create a test plan for an implementation: the relevant "
           "tests, the files with none, the framework and the command.", FilesParams,
           TESTER, tier=CORE, tags=("test plan", "what to test", "tests needed"),
           examples=[("plan tests", {"paths": ["a.py"]})]),
        _d("tester.failures.analyze", "Analyse test failures and suggest causes: pytest, "
           "jest/vitest or go test output read into failures, grouped by likely cause.",
           FailureParams, TESTER, tier=CORE, tags=("failure", "failed", "why failed"),
           examples=[("analyse", {"output": "AssertionError ..."})]),
        _d("tester.results.report", "Report test results to the user: the session's latest "
           "test run, its counts and failures.", NoParams, TESTER,
           tier=CORE, tags=("results", "report", "summary"), examples=[("report", {})]),
        _d("tester.code.generate", "Generate test code for an implementation (the engineer "
           "writes them, with a model), then run the new tests once.", FilesParams,
           TESTER, tier=CONTEXTUAL,
           triggers=(r"\bgenerate", r"write tests?", r"implement tests?"),
           tags=("generate", "write tests", "implement tests"),
           examples=[("tests for a module", {"paths": ["a.py"]})]),
        _d("tester.coverage.analyze", "Analyse test coverage and find untested code: the "
           "tests run under coverage.py, uncovered lines of the changed files.",
           PathsParams, TESTER, tier=CONTEXTUAL,
           triggers=(r"\bcoverage", r"\buncovered", r"\bmissing tests?"),
           tags=("coverage", "uncovered", "missing tests"), examples=[("coverage", {})]),
    ]  # fmt: skip
