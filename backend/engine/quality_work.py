"""The Inspector's checks as real ops: the project's own linters, formatters and type
checkers, found by tool discovery and run in the sandbox (:mod:`backend.pipelines.checks`).

``inspector.style.check`` keeps lint and format issues, ``inspector.implementation.validate``
every category. Without paths they inspect what the session has changed since its start
(its checkpoints' diff); with none changed they say so. Both are commands to the approval
policy: a project's ``.venv/bin/ruff`` is the repository's code, confined but not trusted.
Each report is kept as the session's latest inspection (:class:`LatestReports`), which
``inspector.issues.report`` shows; :class:`QualityWork` is also the tool part of the
Inspector's other ops (:mod:`backend.team.agent_ops.inspector_ops`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from backend.checkpoints.service import Checkpoints
from backend.engine.plan_runs.pipeline_work import PipelineWork
from backend.errors import ErrorKind, SylkError
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest
from backend.pipelines.checks import InspectionReport, inspect
from backend.skills.builtin.teams import (
    DeepParams,
    FailureParams,
    FilesParams,
    IssueParams,
    IssuesReportParams,
    PathsParams,
    TaskValidateParams,
    inspector_skills,
)
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import Guidance, Handler, SkillContext, SkillResult
from backend.team.agent_ops.inspector_ops import (
    AgentAsk,
    InspectorOps,
    LatestReports,
    TaskLookup,
    TaskWork,
    report_body,
)
from backend.team.agent_ops.tester_ops import TesterOps
from backend.team.wiring import install_handler

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

CHECK_TIMEOUT_S = 120.0
REAL_OPS = ("inspector.style.check", "inspector.implementation.validate")


class NothingToInspectError(SylkError):
    """No files were named and the session has changed none."""

    error_kind = ErrorKind.INVALID

    def __init__(self) -> None:
        super().__init__(
            "no files to inspect: none were named and this session has changed none",
            help_hint='pass paths, e.g. {"paths": ["src/app.py"]}',
        )


class QualityWork:
    def __init__(
        self, tools: ToolDiscovery, checkpoints: Checkpoints, reports: LatestReports | None = None
    ) -> None:
        self._tools = tools
        self._checkpoints = checkpoints
        self.reports = reports or LatestReports()

    async def changed(self, ctx: SkillContext) -> list[str]:
        """What the session has changed since its start (deleted files left out)."""
        diff = await self._checkpoints.diff(ctx.session_id, ctx.workspace)
        return [f.path for f in diff.files if f.status != "deleted"]

    async def patch(self, ctx: SkillContext) -> str:
        """The session's changes as a unified diff (bounded by the checkpoints)."""
        return (await self._checkpoints.diff(ctx.session_id, ctx.workspace)).patch

    async def run(self, ctx: SkillContext, files: list[str]) -> InspectionReport:
        """Every discovered check on ``files``, in the session's sandbox."""
        workspace = Path(ctx.workspace)
        request = ToolDiscoveryRequest(session_id=ctx.session_id, requesting_agent="inspector")
        found = await self._tools.adiscover(request, workspace, protected=ctx.confinement.protected)
        return await inspect(workspace, files, found, ctx.confinement, CHECK_TIMEOUT_S)

    async def inspect(
        self, ctx: SkillContext, paths: list[str], categories: tuple[str, ...]
    ) -> dict[str, Any]:
        files = paths or await self.changed(ctx)
        if not files:
            raise NothingToInspectError()
        report = await self.run(ctx, files)
        body = report_body(report, [i for i in report.issues if i.category in categories])
        op = REAL_OPS[1] if "type" in categories else REAL_OPS[0]
        self.reports.keep("inspection", ctx.session_id, op, body)
        return body


def install_inspection(
    gateway: Gateway,
    tools: ToolDiscovery,
    checkpoints: Checkpoints,
    reports: LatestReports | None = None,
) -> QualityWork:
    """Replace the Inspector's placeholder checks with ones that run the project's tools."""
    work = QualityWork(tools, checkpoints, reports)
    for skill in inspector_skills(work.inspect):
        if skill.op in REAL_OPS:
            gateway.registry.unregister(skill.op)
            gateway.registry.register(skill)
    return work


def install_quality_ops(parts: EngineParts) -> LatestReports:
    """Every Inspector and Tester op real: the checks above, and the ops of
    :mod:`backend.team.agent_ops.inspector_ops` and :mod:`backend.team.agent_ops.tester_ops`,
    sharing the sessions' latest reports; a task id names a task of the session's pipelines, and the
    model parts ask agents through the engine's answer path."""
    gateway, tools = parts.gateway, parts.knowledge.tools
    turns = parts.turns
    agents = AgentAsk(parts.answers.answer, lambda role: not turns.choice(role).offline)
    tasks = pipeline_tasks(parts.dags.pipelines)
    reports = LatestReports()
    work = install_inspection(gateway, tools, parts.checkpoints, reports)
    inspector = InspectorOps(work, reports, agents, tasks)
    tester = TesterOps(tools, work, reports, agents, inspector.task)

    async def validate(ctx: SkillContext, p: TaskValidateParams) -> SkillResult:
        body = await inspector.validate_task(ctx, p.task_id, p.paths, p.criteria)
        return SkillResult(result=body, guidance=_report_next(body))

    async def deep(ctx: SkillContext, p: DeepParams) -> SkillResult:
        body = await inspector.deep_analysis(ctx, p.paths, p.max_files)
        return SkillResult(result=body, guidance=_report_next(body))

    async def issues(ctx: SkillContext, p: IssuesReportParams) -> dict[str, Any]:
        return await inspector.issues_report(ctx, p.file)

    async def explain(ctx: SkillContext, p: IssueParams) -> dict[str, Any]:
        return await inspector.explain(ctx, p.issue)

    async def plan(ctx: SkillContext, p: FilesParams) -> SkillResult:
        return await tester.plan(ctx, p.paths, p.task_id)

    async def analyze(ctx: SkillContext, p: FailureParams) -> dict[str, Any]:
        return await tester.analyze(ctx, p.output)

    async def results(ctx: SkillContext, p: BaseModel) -> dict[str, Any]:
        return await tester.results(ctx)

    async def generate(ctx: SkillContext, p: FilesParams) -> Any:
        return await tester.generate(ctx, p.paths, p.task_id)

    async def coverage(ctx: SkillContext, p: PathsParams) -> dict[str, Any]:
        return await tester.coverage(ctx, p.paths)

    declared = gateway.registry.get("tester.tests.run")
    run_tests = declared.handler if declared is not None else None

    async def run_and_keep(ctx: SkillContext, p: BaseModel) -> Any:
        assert run_tests is not None
        out = await run_tests(ctx, p)
        result = out.result if isinstance(out, SkillResult) else out
        if isinstance(result, dict) and "exit_code" in result:
            await tester.keep_run(ctx, "tester.tests.run", result)
        return out

    command = {"action": "command"}
    ops: list[tuple[str, Handler, dict[str, str]]] = [
        ("inspector.task.validate", validate, command),
        ("inspector.analysis.deep", deep, command),
        ("inspector.issues.report", issues, {}),
        ("inspector.issue.explain", explain, {}),
        ("tester.plan.create", plan, {}),
        ("tester.failures.analyze", analyze, {}),
        ("tester.results.report", results, {}),
        ("tester.code.generate", generate, command),
        ("tester.coverage.analyze", coverage, command),
    ]
    if run_tests is not None:
        ops.append(("tester.tests.run", run_and_keep, {}))
    for op, handler, changes in ops:
        install_handler(gateway, op, handler, **changes)
    return reports


def pipeline_tasks(pipelines: object) -> TaskLookup | None:
    """A task of the session's live or recently finished pipelines, from the desk."""
    if not isinstance(pipelines, PipelineWork):
        return None
    desk = pipelines.desk

    async def lookup(session_id: str, task_id: str) -> TaskWork | None:
        if not desk.known(session_id, task_id):
            return None
        context = desk.find(session_id, task_id).pipeline.context
        files = dict.fromkeys([*context.modified_files, *context.created_files])
        return TaskWork(task_id, context.task_prompt, tuple(context.compliance_criteria),
                        tuple(files))  # fmt: skip

    return lookup


def _report_next(body: dict[str, Any]) -> list[Guidance]:
    if not body["issues"]:
        return []
    return [Guidance(op="inspector.issues.report", prose="Report the issues found, by file")]
