"""The Inspector's tool pass on a real project with real ruff and mypy, in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.tool_discovery.models import (
    DiscoveredTool,
    ToolCategory,
    ToolSource,
)
from backend.pipelines.checks import (
    CheckPathError,
    IssueCategory,
    ToolRunStatus,
    inspect,
)
from tests.integration.pipelines.conftest import MODIFIED, Project

TIMEOUT_S = 60.0


async def test_issues_come_back_with_file_line_and_category(project: Project) -> None:
    report = await inspect(
        project.root,
        MODIFIED,
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    found = {(i.file, i.line, i.category, i.tool, i.code) for i in report.issues}
    assert ("pkg/calc.py", 1, IssueCategory.LINT, "ruff", "F401") in found
    assert ("pkg/halves.py", 2, IssueCategory.TYPE, "mypy", "return-value") in found
    assert ("pkg/ugly.py", 1, IssueCategory.FORMAT, "ruff", "format") in found
    assert not any(i.file == "tests/test_calc.py" for i in report.issues)
    assert {r.tool: r.status for r in report.tools_run} == {
        "ruff (linter)": ToolRunStatus.ISSUES,
        "ruff (formatter)": ToolRunStatus.ISSUES,
        "mypy (type_checker)": ToolRunStatus.ISSUES,
    }
    assert all(r.argv[-len(MODIFIED) :] == MODIFIED for r in report.tools_run)
    assert report.level not in (None, "none")  # every tool ran confined
    assert not report.clean


async def test_after_the_fix_the_report_is_clean(project: Project) -> None:
    project.fix()
    report = await inspect(
        project.root,
        MODIFIED,
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert report.issues == []
    assert {r.status for r in report.tools_run} == {ToolRunStatus.CLEAN}
    assert report.clean


async def test_only_the_modified_files_are_checked(project: Project) -> None:
    report = await inspect(
        project.root,
        ["pkg/ugly.py", "pkg/deleted.py"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert report.files == ["pkg/ugly.py"]
    assert {i.file for i in report.issues} == {"pkg/ugly.py"}


async def test_a_missing_tool_and_one_sylk_cannot_run_are_skipped(project: Project) -> None:
    other = DiscoveredTool(
        name="golangci-lint",
        category=ToolCategory.LINTER,
        language="go",
        run_command="golangci-lint run ./...",
        source=ToolSource.TOOLCHAIN,
    )
    tools = [*project.discovered.tools, other]
    report = await inspect(
        project.root,
        [*MODIFIED, "main.go"],
        tools,
        project.confinement,
        TIMEOUT_S,
        path_env=str(project.outside),
    )
    reasons = {s.tool: s.reason for s in report.skipped}
    assert reasons["ruff (linter)"] == "not installed: pip install ruff"
    assert reasons["mypy (type_checker)"].startswith("not installed")
    assert "cannot run golangci-lint" in reasons["golangci-lint (linter)"]
    assert report.tools_run == [] and report.level is None


async def test_a_tool_that_crashes_or_hangs_is_reported_as_such(project: Project) -> None:
    project.fake_tool("ruff", "echo 'ruff: panicked at src/main.rs' >&2\nexit 101\n")
    project.fake_tool("mypy", "sleep 60\n")
    report = await inspect(
        project.root,
        MODIFIED,
        project.discovered,
        project.confinement,
        2.0,
        path_env=project.path_env,
    )
    runs = {r.tool: r for r in report.tools_run}
    crashed = runs["ruff (linter)"]
    assert crashed.status is ToolRunStatus.CRASHED and "panicked" in crashed.detail
    assert crashed.argv[0] == str(project.root / ".venv/bin/ruff")  # the project's own first
    hung = runs["mypy (type_checker)"]
    assert (hung.status, hung.exit_code) == (ToolRunStatus.TIMED_OUT, None)
    assert not report.clean and report.failed_runs


async def test_a_tool_runs_in_the_sandbox_and_cannot_write_outside(project: Project) -> None:
    target = project.outside / "pwned"
    project.fake_tool("ruff", f"echo x > {target}\necho '[]'\n")
    report = await inspect(
        project.root,
        ["pkg/calc.py"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert not target.exists()
    assert report.level not in (None, "none")


async def test_a_file_named_like_an_option_is_checked_not_obeyed(project: Project) -> None:
    (project.root / "--version.py").write_text("import os\n")
    report = await inspect(
        project.root,
        ["--version.py"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert any(i.file == "--version.py" and i.code == "F401" for i in report.issues)
    assert all("./--version.py" in r.argv for r in report.tools_run)


async def test_a_file_outside_the_workspace_is_a_typed_error(project: Project) -> None:
    with pytest.raises(CheckPathError):
        await inspect(
            project.root,
            ["../outside/x.py"],
            project.discovered,
            project.confinement,
            TIMEOUT_S,
            path_env=project.path_env,
        )
    with pytest.raises(CheckPathError):
        await inspect(
            project.root,
            [str(Path("/etc/passwd"))],
            project.discovered,
            project.confinement,
            TIMEOUT_S,
            path_env=project.path_env,
        )
