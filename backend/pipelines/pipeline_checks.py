"""The inspector's and tester's work as one pipeline sees it: the files it touched in, a
report out.

:class:`PipelineChecker` is the seam: the pipeline asks it to inspect its modified files
and to test them. :class:`SandboxedChecks` is the real one: the project's discovered
linters, formatters and type checkers and its test framework, run in the sandbox by
:mod:`backend.pipelines.checks` on the tests :func:`relevant_tests` picks for the files.
A later checker can add the model-driven parts (task compliance, writing tests) around it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.knowledge.tool_discovery.models import ToolCategory
from backend.pipelines.checks import (
    InspectionReport,
    TestReport,
    inspect,
    relevant_tests,
    run_tests,
)
from backend.pipelines.checks.inspector import Discovered, discovered_tools
from backend.pipelines.checks.tester import FRAMEWORKS
from backend.sandbox import Confines, SandboxLevel


class PipelineChecker(Protocol):
    """What the pipeline needs of its inspector and tester."""

    async def inspect(self, files: Sequence[str]) -> InspectionReport: ...

    async def test(self, files: Sequence[str]) -> TestReport: ...


@dataclass(frozen=True)
class SandboxedChecks:
    """The project's own tools, as discovery found them, run in the sandbox."""

    workspace: Path
    discovered: Discovered
    confinement: Confines
    inspect_timeout_s: float = 120.0
    test_timeout_s: float = 600.0
    path_env: str | None = None
    level: SandboxLevel | None = None

    async def inspect(self, files: Sequence[str]) -> InspectionReport:
        return await inspect(
            self.workspace,
            files,
            self.discovered,
            self.confinement,
            self.inspect_timeout_s,
            path_env=self.path_env,
            level=self.level,
        )

    async def test(self, files: Sequence[str]) -> TestReport:
        """The relevant tests of ``files`` (none relevant: ``NO_TESTS``, not the suite)."""
        targets = await asyncio.to_thread(self.targets, files)
        return await run_tests(
            self.workspace,
            targets,
            self.discovered,
            self.confinement,
            self.test_timeout_s,
            path_env=self.path_env,
            level=self.level,
        )

    def targets(self, files: Sequence[str]) -> list[str]:
        names = [
            t.name
            for t in discovered_tools(self.discovered)
            if t.category is ToolCategory.TEST_FRAMEWORK
        ]
        framework = next((n for n in names if n in FRAMEWORKS), None)
        if framework is None:
            return []
        return relevant_tests(self.workspace, files, framework)
