"""Linters' and type checkers' machine output, read into :class:`InspectionIssue`.

Each parser is pure: ``(stdout, stderr, workspace) -> issues``. They read the formats
the tools document as stable: ruff ``--output-format json``, mypy ``--output json``
(and its classic ``file:line:col: severity: message  [code]`` lines for versions
before 1.11), pyright ``--outputjson``, flake8's default lines, eslint
``--format json``, tsc ``--pretty false`` lines and go vet's ``file:line:col:
message`` lines. Output that is not in the format raises :class:`ToolOutputError`;
the inspector records the run as crashed with that reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.results import (
    InspectionIssue,
    IssueCategory,
    IssueSeverity,
    ToolOutputError,
)

LINT, TYPE = IssueCategory.LINT, IssueCategory.TYPE
ERROR, WARNING, INFO = IssueSeverity.ERROR, IssueSeverity.WARNING, IssueSeverity.INFO
_SEVERITIES = {
    "error": ERROR,
    "warning": WARNING,
    "note": INFO,
    "information": INFO,
    "info": INFO,
    "hint": INFO,
}


def _json(tool: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolOutputError(tool, f"not JSON ({exc.msg} at line {exc.lineno})") from None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_ruff(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """``ruff check --output-format json``: a list of diagnostics with an optional fix."""
    data = _json("ruff", stdout.strip() or "[]")
    if not isinstance(data, list):
        raise ToolOutputError("ruff", "expected a JSON list of diagnostics")
    issues = []
    for item in data:
        if not isinstance(item, dict):
            raise ToolOutputError("ruff", "a diagnostic is not an object")
        location = item.get("location") or {}
        fix = item.get("fix") or {}
        suggestion = _str(fix.get("message")) if isinstance(fix, dict) else ""
        code = _str(item.get("code"))
        issues.append(
            InspectionIssue(
                file=reported_path(_str(item.get("filename")), workspace),
                line=_int(location.get("row")),
                column=_int(location.get("column")),
                category=LINT,
                severity=_SEVERITIES.get(_str(item.get("severity")), ERROR),
                code=code,
                message=_str(item.get("message")),
                suggestion=suggestion or (f"see {item['url']}" if _str(item.get("url")) else ""),
                tool="ruff",
            )
        )
    return issues


_MYPY_LINE = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>error|warning|note):\s*"
    r"(?P<msg>.*?)(?:\s+\[(?P<code>[\w-]+)\])?$"
)


def parse_mypy(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """mypy's JSON lines (0-based columns), or its classic text lines (1-based).

    A note (``severity: note``) that follows an error becomes that error's suggestion
    rather than an issue of its own: mypy uses notes for hints about the line before.
    """
    issues: list[InspectionIssue] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{"):
            item = _json("mypy", line)
            column = _int(item.get("column"))
            entry = (
                _str(item.get("file")),
                _int(item.get("line")),
                None if column is None or column < 0 else column + 1,
                _str(item.get("severity")),
                _str(item.get("message")),
                _str(item.get("code")),
                _str(item.get("hint")),
            )
        elif found := _MYPY_LINE.match(line):
            col = found["col"]
            entry = (
                found["file"],
                int(found["line"]),
                int(col) if col else None,
                found["sev"],
                found["msg"],
                found["code"] or "",
                "",
            )
        else:
            continue  # "Success: ...", summaries, a note without a position
        file, number, column, severity, message, code, hint = entry
        if severity == "note" and issues and issues[-1].file == reported_path(file, workspace):
            previous = issues[-1]
            joined = "; ".join(s for s in (previous.suggestion, message) if s)
            issues[-1] = previous.model_copy(update={"suggestion": joined})
            continue
        issues.append(
            InspectionIssue(
                file=reported_path(file, workspace),
                line=number,
                column=column,
                category=TYPE,
                severity=_SEVERITIES.get(severity, ERROR),
                code=code,
                message=message,
                suggestion=hint,
                tool="mypy",
            )
        )
    return issues


def parse_pyright(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """``pyright --outputjson``: ``generalDiagnostics`` with 0-based ranges."""
    data = _json("pyright", stdout)
    diagnostics = data.get("generalDiagnostics") if isinstance(data, dict) else None
    if not isinstance(diagnostics, list):
        raise ToolOutputError("pyright", "no generalDiagnostics list")
    issues = []
    for item in diagnostics:
        start = (item.get("range") or {}).get("start") or {}
        line, col = _int(start.get("line")), _int(start.get("character"))
        issues.append(
            InspectionIssue(
                file=reported_path(_str(item.get("file")), workspace),
                line=None if line is None else line + 1,
                column=None if col is None else col + 1,
                category=TYPE,
                severity=_SEVERITIES.get(_str(item.get("severity")), ERROR),
                code=_str(item.get("rule")),
                message=_str(item.get("message")),
                tool="pyright",
            )
        )
    return issues


_FLAKE8_LINE = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+):\s*(?P<code>[A-Z]+\d+)\s+(?P<msg>.*)$"
)


def parse_flake8(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """flake8's default ``path:row:col: CODE text`` lines."""
    issues = []
    for line in stdout.splitlines():
        if found := _FLAKE8_LINE.match(line.strip()):
            code = found["code"]
            issues.append(
                InspectionIssue(
                    file=reported_path(found["file"], workspace),
                    line=int(found["line"]),
                    column=int(found["col"]),
                    category=LINT,
                    severity=WARNING if code.startswith(("W", "C")) else ERROR,
                    code=code,
                    message=found["msg"],
                    tool="flake8",
                )
            )
    return issues


def parse_eslint(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """``eslint --format json``: one result per file, messages with severity 1 or 2."""
    data = _json("eslint", stdout.strip() or "[]")
    if not isinstance(data, list):
        raise ToolOutputError("eslint", "expected a JSON list of file results")
    issues = []
    for result in data:
        file = reported_path(_str(result.get("filePath")), workspace)
        for item in result.get("messages") or []:
            rule = _str(item.get("ruleId"))
            fixes = [_str(s.get("desc")) for s in item.get("suggestions") or []]
            if item.get("fix"):
                fixes.insert(0, "fixable with `eslint --fix`")
            issues.append(
                InspectionIssue(
                    file=file,
                    line=_int(item.get("line")),
                    column=_int(item.get("column")),
                    category=LINT if rule or not item.get("fatal") else TYPE,
                    severity=ERROR if item.get("severity") == 2 else WARNING,
                    code=rule,
                    message=_str(item.get("message")),
                    suggestion="; ".join(f for f in fixes if f),
                    tool="eslint",
                )
            )
    return issues


_TSC_LINE = re.compile(
    r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\):\s*(?P<sev>error|warning|message)\s+"
    r"(?P<code>TS\d+):\s*(?P<msg>.*)$"
)


def parse_tsc(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """``tsc --noEmit --pretty false``: ``file(line,col): error TS1234: message`` lines;
    an indented line continues the message before it (an elaboration chain)."""
    issues: list[InspectionIssue] = []
    for line in stdout.splitlines():
        if found := _TSC_LINE.match(line):
            issues.append(
                InspectionIssue(
                    file=reported_path(found["file"], workspace),
                    line=int(found["line"]),
                    column=int(found["col"]),
                    category=TYPE,
                    severity=_SEVERITIES.get(found["sev"], INFO),
                    code=found["code"],
                    message=found["msg"],
                    tool="tsc",
                )
            )
        elif line.startswith(" ") and line.strip() and issues:
            last = issues[-1]
            issues[-1] = last.model_copy(update={"message": f"{last.message}\n{line.strip()}"})
    return issues


_GO_LINE = re.compile(r"^(?P<file>[^:\s][^:]*\.go):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<msg>.+)$")


def parse_go_vet(stdout: str, stderr: str, workspace: Path) -> list[InspectionIssue]:
    """go vet's ``file.go:line:col: message`` lines on stderr (``# package`` lines and
    the ``vet:`` summary dropped); compile errors come in the same shape."""
    issues = []
    for line in (stderr + "\n" + stdout).splitlines():
        if found := _GO_LINE.match(line.strip()):
            col = found["col"]
            issues.append(
                InspectionIssue(
                    file=reported_path(found["file"], workspace),
                    line=int(found["line"]),
                    column=int(col) if col else None,
                    category=TYPE,
                    severity=ERROR,
                    message=found["msg"],
                    tool="go vet",
                )
            )
    return issues
