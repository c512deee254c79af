"""The Inspector's checks as real ops: the project's own linters, formatters and type
checkers, found by tool discovery and run in the sandbox (:mod:`backend.pipelines.checks`).

``inspector.style.check`` keeps lint and format issues, ``inspector.implementation.validate``
every category. Without paths they inspect what the session has changed since its start
(its checkpoints' diff); with none changed they say so. Both are commands to the approval
policy: a project's ``.venv/bin/ruff`` is the repository's code, confined but not trusted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.checkpoints.service import Checkpoints
from backend.errors import ErrorKind, SylkError
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest
from backend.pipelines.checks import inspect
from backend.skills.builtin.teams import inspector_skills
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

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
    def __init__(self, tools: ToolDiscovery, checkpoints: Checkpoints) -> None:
        self._tools = tools
        self._checkpoints = checkpoints

    async def _changed(self, ctx: SkillContext) -> list[str]:
        diff = await self._checkpoints.diff(ctx.session_id, ctx.workspace)
        return [f.path for f in diff.files if f.status != "deleted"]

    async def inspect(
        self, ctx: SkillContext, paths: list[str], categories: tuple[str, ...]
    ) -> dict[str, Any]:
        files = paths or await self._changed(ctx)
        if not files:
            raise NothingToInspectError()
        workspace = Path(ctx.workspace)
        request = ToolDiscoveryRequest(session_id=ctx.session_id, requesting_agent="inspector")
        found = await self._tools.adiscover(request, workspace, protected=ctx.confinement.protected)
        report = await inspect(workspace, files, found, ctx.confinement, CHECK_TIMEOUT_S)
        issues = [i for i in report.issues if i.category in categories]
        body = report.model_dump(mode="json")
        body["issues"] = [i.model_dump(mode="json") for i in issues]
        body["clean"] = not issues and not report.failed_runs
        return body


def install_inspection(gateway: Gateway, tools: ToolDiscovery, checkpoints: Checkpoints) -> None:
    """Replace the Inspector's placeholder checks with ones that run the project's tools."""
    work = QualityWork(tools, checkpoints)
    for skill in inspector_skills(work.inspect):
        if skill.op in REAL_OPS:
            gateway.registry.unregister(skill.op)
            gateway.registry.register(skill)
