"""The Inspector's tool pass: the project's linters, formatters and type checkers, run in
the sandbox on a pipeline's modified files, their output read into issues.

Which tools: the linters, formatters and type checkers in discovery's answer (its
``tools``; a category the user must still choose for has none and is not guessed).
How: :mod:`.check_table` (machine formats, the modified files only). A tool with no
runner here, with no modified file of its kind, or not installed is *skipped* with the
reason; one that crashes, times out or cannot start is a :class:`ToolRun` with that
status. Nothing a tool does raises: a report always comes back. ``timeout_s`` is each
tool's limit; two tools run at a time (the checks are CPU-bound).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from pathlib import Path

from backend.knowledge.tool_discovery.models import (
    DiscoveredTool,
    ToolCategory,
    ToolDiscoveryResponse,
)
from backend.pipelines.checks.check_table import CheckCommand, command_for
from backend.pipelines.checks.paths import as_argument, workspace_relative
from backend.pipelines.checks.results import (
    InspectionIssue,
    InspectionReport,
    SkippedTool,
    ToolOutputError,
    ToolRun,
    ToolRunStatus,
)
from backend.pipelines.checks.tool_process import locate_executable, run_tool, short
from backend.sandbox import Confines, SandboxLevel

INSPECTED = (ToolCategory.LINTER, ToolCategory.FORMATTER, ToolCategory.TYPE_CHECKER)
PARALLEL_TOOLS = 2
Discovered = ToolDiscoveryResponse | Sequence[DiscoveredTool]


def discovered_tools(discovered: Discovered) -> list[DiscoveredTool]:
    tools = discovered.tools if isinstance(discovered, ToolDiscoveryResponse) else discovered
    return list(tools)


def modified_files(workspace: Path, files: Iterable[str]) -> list[str]:
    """The files as workspace-relative paths, each once; deleted ones dropped (nothing to
    check); one outside the workspace is a :class:`CheckPathError`."""
    kept: dict[str, None] = {}
    for file in files:
        rel = workspace_relative(file, workspace)
        if (workspace / rel).is_file():
            kept[rel] = None
    return list(kept)


async def inspect(
    workspace: Path,
    files: Iterable[str],
    discovered: Discovered,
    confinement: Confines,
    timeout_s: float = 120.0,
    *,
    path_env: str | None = None,
    level: SandboxLevel | None = None,
) -> InspectionReport:
    """Run every discovered check on ``files``; see the module doc."""
    root = await asyncio.to_thread(workspace.resolve)
    targets = await asyncio.to_thread(modified_files, root, list(files))
    skipped: list[SkippedTool] = []
    planned: list[tuple[CheckCommand, list[str], str]] = []
    seen: set[tuple[str, ToolCategory]] = set()
    for tool in discovered_tools(discovered):
        if tool.category not in INSPECTED or (tool.name, tool.category) in seen:
            continue
        seen.add((tool.name, tool.category))
        label = f"{tool.name} ({tool.category.value})"
        command = command_for(tool.name, tool.category, tool.version)
        if command is None:
            skipped.append(
                SkippedTool(
                    tool=label,
                    reason=f"Sylk cannot run {tool.name} as a check yet; run it yourself",
                )
            )
            continue
        mine = [f for f in targets if f.endswith(command.suffixes)]
        if not mine:
            skipped.append(SkippedTool(tool=label, reason="no modified file it checks"))
            continue
        exe = locate_executable(command.executable, command.ecosystem, root, path_env)
        if exe is None:
            hint = f": {tool.install_cmd}" if tool.install_cmd else ""
            skipped.append(SkippedTool(tool=label, reason=f"not installed{hint}"))
            continue
        planned.append((command, mine, exe))
    slots = asyncio.Semaphore(PARALLEL_TOOLS)

    async def one(command: CheckCommand, mine: list[str], exe: str) -> _Checked:
        async with slots:
            return await _run_check(command, mine, exe, root, confinement, timeout_s, level)

    done = await asyncio.gather(*(one(*p) for p in planned))
    issues = sorted(
        (i for checked in done for i in checked.issues),
        key=lambda i: (i.file, i.line or 0, i.column or 0, i.tool, i.code),
    )
    levels = {checked.level for checked in done if checked.level is not None}
    return InspectionReport(
        issues=issues,
        tools_run=[checked.run for checked in done],
        skipped=skipped,
        files=targets,
        level=_weakest(levels),
    )


class _Checked:
    def __init__(self, run: ToolRun, issues: list[InspectionIssue], level: str | None) -> None:
        self.run, self.issues, self.level = run, issues, level


def _weakest(levels: set[str]) -> str | None:
    order = ("none", "landlock", "full")
    return next((lv for lv in order if lv in levels), None)


def _argv(command: CheckCommand, exe: str, files: list[str]) -> list[str]:
    if command.scope == "project":
        return [exe, *command.args]
    if command.scope == "packages":
        folders = dict.fromkeys(f.rpartition("/")[0] for f in files)
        return [exe, *command.args, *(f"./{d}" if d else "." for d in folders)]
    return [exe, *command.args, *(as_argument(f) for f in files)]


async def _run_check(  # noqa: PLR0917 - one call site, every argument a different thing
    command: CheckCommand,
    files: list[str],
    exe: str,
    root: Path,
    confinement: Confines,
    timeout_s: float,
    level: SandboxLevel | None,
) -> _Checked:
    argv = _argv(command, exe, files)
    label = f"{command.tool} ({command.category.value})"
    out = await run_tool(
        argv, workspace=root, confinement=confinement, timeout_s=timeout_s, level=level
    )

    def record(status: ToolRunStatus, detail: str = "") -> ToolRun:
        return ToolRun(
            tool=label,
            argv=argv,
            exit_code=out.exit_code,
            duration_ms=out.duration_ms,
            status=status,
            detail=detail,
        )

    if not out.finished:
        return _Checked(record(out.status, out.detail), [], out.level)
    if out.cut:
        return _Checked(
            record(ToolRunStatus.CRASHED, "its output was too large to read"), [], out.level
        )
    try:
        issues = command.parse(out.stdout, out.stderr, root)
    except ToolOutputError as exc:
        detail = f"{exc.message}; it said: {short(out.stderr or out.stdout)}"
        return _Checked(record(ToolRunStatus.CRASHED, detail), [], out.level)
    if command.scope != "files":
        wanted = set(files)
        issues = [i for i in issues if i.file in wanted]
    if out.exit_code not in command.ok_codes and not issues:
        detail = f"exit code {out.exit_code}: {short(out.stderr or out.stdout)}"
        return _Checked(record(ToolRunStatus.CRASHED, detail), [], out.level)
    if out.exit_code != 0 and not issues and command.scope == "files":
        # It said something was wrong but nothing it said could be read: not clean.
        said = short(out.stderr or out.stdout)
        detail = f"exit code {out.exit_code} but no issue could be read: {said}"
        return _Checked(record(ToolRunStatus.CRASHED, detail), [], out.level)
    status = ToolRunStatus.ISSUES if issues else ToolRunStatus.CLEAN
    return _Checked(record(status), issues, out.level)
