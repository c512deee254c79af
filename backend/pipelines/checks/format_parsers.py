"""Formatters' check output, read into one format issue per file that would change.

Unified diffs (``ruff format --check --diff``, ``black --check --diff``) give the
first line that changes and the diff itself as the suggestion; file lists
(``prettier --list-different``, ``gofmt -l``) give the file only. A formatter's
``error: Failed to parse ...`` on stderr (a file it cannot read) is an error issue,
so a syntax error is not mistaken for a clean format check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.results import InspectionIssue, IssueCategory, IssueSeverity

FORMAT = IssueCategory.FORMAT
MAX_SUGGESTION = 2000  # characters of the diff kept as the suggestion
_HUNK = re.compile(r"^@@ -(?P<line>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_PARSE_ERROR = re.compile(
    r"^error: Failed to (?:parse|format) (?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$"
)
_BLACK_ERROR = re.compile(r"^error: cannot format (?P<file>[^:\n]+): (?P<msg>.*)$")

Parser = Callable[[str, str, Path], list[InspectionIssue]]


def _diff_issue(
    tool: str, fix: str, file: str, hunk_line: int | None, diff: list[str]
) -> InspectionIssue:
    text = "\n".join(diff)
    if len(text) > MAX_SUGGESTION:
        text = text[:MAX_SUGGESTION] + "\n..."
    return InspectionIssue(
        file=file,
        line=hunk_line,
        category=FORMAT,
        severity=IssueSeverity.ERROR,
        code="format",
        message=f"{tool} would reformat this file",
        suggestion=f"run `{fix} {file}`; it would change:\n{text}",
        tool=tool,
    )


def parse_unified_diff(tool: str, fix: str) -> Parser:
    """A parser for a formatter that prints a unified diff per file it would change."""

    def parse(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
        issues: list[InspectionIssue] = []
        current: str | None = None
        first_line: int | None = None
        diff: list[str] = []
        for line in stdout.splitlines():
            if line.startswith("--- "):
                if current is not None:
                    issues.append(_diff_issue(tool, fix, current, first_line, diff))
                name = line[4:].split("\t")[0].strip()  # black adds a tab and a timestamp
                current, first_line, diff = reported_path(name, workspace), None, [line]
                continue
            if current is None:
                continue
            diff.append(line)
            if first_line is None and (found := _HUNK.match(line)):
                first_line = max(1, int(found["line"]))
        if current is not None:
            issues.append(_diff_issue(tool, fix, current, first_line, diff))
        return issues + parse_errors(tool, stderr, workspace)

    return parse


def parse_file_list(tool: str) -> Parser:
    """A parser for a formatter that lists the files it would change, one a line."""

    def parse(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
        issues = [
            InspectionIssue(
                file=reported_path(line, workspace),
                category=FORMAT,
                code="format",
                message=f"{tool} would reformat this file",
                suggestion=f"run the project's formatter ({tool}) on it",
                tool=tool,
            )
            for line in (raw.strip() for raw in stdout.splitlines())
            if line and not line.startswith(("[", "Checking", "All matched"))
        ]
        return issues + parse_errors(tool, stderr, workspace)

    return parse


def parse_errors(tool: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """A formatter's "cannot parse this file" lines, as error issues on that file."""
    issues = []
    for line in stderr.splitlines():
        if found := _PARSE_ERROR.match(line.strip()):
            issues.append(
                InspectionIssue(
                    file=reported_path(found["file"], workspace),
                    line=int(found["line"]),
                    column=int(found["col"]),
                    category=FORMAT,
                    code="parse-error",
                    message=f"{tool} cannot parse the file: {found['msg']}",
                    tool=tool,
                )
            )
        elif found := _BLACK_ERROR.match(line.strip()):
            issues.append(
                InspectionIssue(
                    file=reported_path(found["file"], workspace),
                    category=FORMAT,
                    code="parse-error",
                    message=f"{tool} cannot format the file: {found['msg']}",
                    tool=tool,
                )
            )
    return issues
