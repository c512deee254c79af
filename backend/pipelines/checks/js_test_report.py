"""jest's ``--json`` report, and vitest's ``--reporter=json`` (the same shape), read into
test failures.

Documented shape: ``{numPassedTests, numFailedTests, numPendingTests, numTodoTests,
numRuntimeErrorTestSuites, testResults: [{name, status, message, assertionResults:
[{ancestorTitles, title, fullName, status, failureMessages, location}]}]}``. A suite
that failed to run at all (a syntax error, a missing import) has no assertion results
and a ``message``: it is one error named by its file. ``location`` is there with
jest's ``--testLocationInResults`` (and in vitest); otherwise the line comes from the
first stack frame in the test file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.pipelines.checks.assertion_values import js_values, strip_ansi
from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.results import TestFailure, ToolOutputError

MAX_TRACE = 8000


@dataclass
class JsCounts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[TestFailure] = field(default_factory=list)


def find_report(tool: str, stdout: str) -> dict[str, Any]:
    """The JSON report in ``stdout``, also when a test's console output came before it."""
    text = stdout.strip()
    start = 0
    while (start := text.find("{", start)) != -1:
        try:
            data, _ = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError:
            start += 1
            continue
        if isinstance(data, dict) and "testResults" in data:
            return data
        start += 1
    raise ToolOutputError(tool, "no JSON report with testResults in its output")


def _stack_line(trace: str, file_abs: str) -> int | None:
    if not file_abs:
        return None
    found = re.search(rf"{re.escape(file_abs)}:(\d+):\d+", trace)
    return int(found[1]) if found else None


def parse_js_report(tool: str, stdout: str, workspace: Path) -> JsCounts:
    data = find_report(tool, stdout)
    counts = JsCounts()
    for suite in data.get("testResults") or []:
        file_abs = str(suite.get("name") or "")
        file = reported_path(file_abs, workspace) if file_abs else ""
        results = suite.get("assertionResults") or []
        if not results and suite.get("status") == "failed":
            message = strip_ansi(str(suite.get("message") or "the test file failed to run"))
            counts.errors += 1
            counts.failures.append(
                TestFailure(
                    name=file,
                    file=file,
                    message=message.strip().splitlines()[0] if message.strip() else "",
                    trace=message[-MAX_TRACE:],
                    kind="error",
                )
            )
            continue
        for case in results:
            status = case.get("status")
            if status == "passed":
                counts.passed += 1
            elif status in ("pending", "skipped", "todo", "disabled"):
                counts.skipped += 1
            elif status == "failed":
                counts.failed += 1
                counts.failures.append(_failure(case, file, file_abs))
    return counts


def _failure(case: dict[str, Any], file: str, file_abs: str) -> TestFailure:
    trace = strip_ansi("\n".join(str(m) for m in case.get("failureMessages") or []))
    location = case.get("location") or {}
    line = location.get("line") if isinstance(location, dict) else None
    if not isinstance(line, int):
        line = _stack_line(trace, file_abs)
    titles = [*(case.get("ancestorTitles") or []), case.get("title") or ""]
    name = str(case.get("fullName") or " ".join(str(t) for t in titles if t))
    expected, actual = js_values(trace)
    first = next((ln.strip() for ln in trace.splitlines() if ln.strip()), "")
    return TestFailure(
        name=name,
        file=file,
        line=line,
        message=first,
        expected=expected,
        actual=actual,
        trace=trace[-MAX_TRACE:],
    )
