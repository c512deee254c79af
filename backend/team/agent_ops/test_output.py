"""A failing test run's output, whatever produced it, read into failures and likely causes.

The Tester is often handed output it did not produce (a CI log, a paste, the tail of
``tester.tests.run``), so the format is sniffed, most specific first: JUnit XML (any
framework's), jest/vitest ``--json``, ``go test -json``, pytest's terminal report, jest's
terminal report, ``go test``'s text, and last a bare Python traceback or error line. The
machine formats reuse the run parsers of :mod:`backend.pipelines.checks`; the terminal
ones are read here. Nothing raises for odd text: unrecognised output is a result that
says so (``format="unrecognised"``, no failures).

Causes are grouped the way a person triages: failures that stop at the same site
(``file:line`` of the raising frame) first, then those sharing an error type; the rest
stand alone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from backend.pipelines.checks import TestFailure, ToolOutputError
from backend.pipelines.checks.assertion_values import (
    go_values,
    js_values,
    pytest_values,
    strip_ansi,
)
from backend.pipelines.checks.go_test_report import parse_go_test
from backend.pipelines.checks.js_test_report import parse_js_report
from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.pytest_report import parse_pytest_junit

MAX_INPUT = 2_000_000  # characters of output read; a longer paste is read from its end
MAX_TRACE = 4000
_SECTION = re.compile(r"^={3,} (FAILURES|ERRORS) ={3,}$")
_BANNER = re.compile(r"^={3,} .* ={3,}$")
_HEADER = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_SUMMARY = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<node>\S+)(?: - (?P<msg>.*))?$")
_RAISED = re.compile(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+): (?P<etype>[A-Za-z_][\w.]*)$")
_FRAME = re.compile(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+):")
_PYTEST_TAIL = re.compile(r"^=*\s*\d+ (passed|failed|errors?|skipped)\b.* in [\d.]+s")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_JEST_HEAD = re.compile(r"^\s*● (?P<name>.+)$")
_JEST_AT = re.compile(r"\(?(?P<file>[^\s()]+\.[cm]?[jt]sx?):(?P<line>\d+):\d+\)?")
_GO_FAIL = re.compile(r"^\s*--- FAIL: (?P<name>\S+)")
_GO_AT = re.compile(r"^\s+(?P<file>[\w./-]+\.go):(?P<line>\d+):\s?(?P<msg>.*)$")
_PY_FILE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_ERROR_LINE = re.compile(
    r"^(?P<etype>[A-Za-z_][\w.]*(?:Error|Exception|Failure))\b:?\s*(?P<msg>.*)$"
)
_SITE = re.compile(r"(?P<site>[^\s:()\"']+:\d+)(?::\d+)?:? (?:[A-Za-z_][\w.]*(?:Error|Exception))")


def analyze_output(output: str, workspace: Path) -> dict[str, Any]:
    """``{format, passed, failed, errors, skipped, failures, causes}`` for ``output``."""
    text = strip_ansi(output[-MAX_INPUT:])
    fmt, counts, failures = _sniff(text, workspace)
    return {
        "format": fmt,
        **counts,
        "failures": [f.model_dump(mode="json") for f in failures],
        "causes": likely_causes(failures),
    }


def _sniff(text: str, ws: Path) -> tuple[str, dict[str, int], list[TestFailure]]:
    stripped = text.strip()
    try:
        if "<testsuite" in stripped:
            junit = parse_pytest_junit(stripped[stripped.find("<") :], ws)
            return "junit", _counted(junit), junit.failures
        if '"testResults"' in stripped and stripped.rstrip().endswith("}"):
            js = parse_js_report("jest", stripped, ws)
            return "jest/vitest json", _counted(js), js.failures
    except ToolOutputError:
        pass  # a fragment of a report: read it as text below
    if re.search(r'^\{.*"Action":', stripped, re.MULTILINE):
        go = parse_go_test(stripped, "", ws)
        return "go test -json", _counted(go), go.failures
    lines = text.splitlines()
    if any(_SECTION.match(ln) or _SUMMARY.match(ln) or _PYTEST_TAIL.match(ln) for ln in lines):
        return "pytest", *_pytest_text(text, ws)
    if any(_JEST_HEAD.match(ln) for ln in lines):
        return "jest/vitest", *_jest_text(text, ws)
    if any(_GO_FAIL.match(ln) for ln in lines):
        return "go test", *_go_text(text, ws)
    failures = _bare(text, ws)
    return ("traceback" if failures else "unrecognised"), _zero(len(failures)), failures


def _counted(c: Any) -> dict[str, int]:
    return {"passed": c.passed, "failed": c.failed, "errors": c.errors, "skipped": c.skipped}


def _zero(errors: int = 0, failed: int = 0) -> dict[str, int]:
    return {"passed": 0, "failed": failed, "errors": errors, "skipped": 0}


def _pytest_text(text: str, ws: Path) -> tuple[dict[str, int], list[TestFailure]]:
    lines = text.splitlines()
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    inside = False
    summary: list[tuple[str, str, str]] = []
    for line in lines:
        if _SECTION.match(line):
            inside, current = True, None
        elif _BANNER.match(line):
            inside, current = False, None
        elif inside and (head := _HEADER.match(line)):
            current = sections.setdefault(head["name"], [])
        elif current is not None:
            current.append(line)
        if found := _SUMMARY.match(line):
            summary.append((found["kind"], found["node"], found["msg"] or ""))
    failures: list[TestFailure] = []
    used: set[str] = set()
    for kind, node, msg in summary:
        key = next((k for k in sections if _names(node, k)), None)
        used.add(key or "")
        failures.append(_pytest_failure(node, kind, msg, sections.get(key or "", []), ws))
    for name, body in sections.items():
        if name not in used:  # a report cut before its summary
            failures.append(_pytest_failure(name, "FAILED", "", body, ws))
    counts = _zero()
    tail = next((ln for ln in reversed(lines) if _COUNT.search(ln) and " in " in ln), "")
    for number, word in _COUNT.findall(tail):
        key = {"error": "errors", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
        if key in counts:
            counts[key] += int(number)
    if not tail:
        counts["failed"] = sum(1 for f in failures if f.kind == "failure")
        counts["errors"] = len(failures) - counts["failed"]
    return counts, failures


def _names(node: str, header: str) -> bool:
    """Whether a summary's node id and a section's header name the same test."""
    parts = node.split("::")
    return header in (".".join(parts[1:]), parts[-1]) or header.endswith(parts[-1])


def _pytest_failure(node: str, kind: str, msg: str, body: list[str], ws: Path) -> TestFailure:
    head = node.partition("::")[0]
    file = reported_path(head, ws) if head.endswith(".py") else ""
    said = [ln[1:].strip() for ln in body if ln.startswith("E ")]
    message = "\n".join(said[:6]) or msg
    line: int | None = None
    for raw in body:
        frame = _FRAME.match(raw)
        if frame and (not file or reported_path(frame["file"], ws) == file):
            line = int(frame["line"])
    expected, actual = pytest_values(message) if kind == "FAILED" else (None, None)
    return TestFailure(
        name=node,
        file=file,
        line=line,
        message=message,
        expected=expected,
        actual=actual,
        trace="\n".join(body)[-MAX_TRACE:],
        kind="failure" if kind == "FAILED" else "error",
    )


def _blocks(text: str, head: re.Pattern[str]) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if match := head.match(line):
            found.append((match["name"].strip(), []))
        elif found:
            found[-1][1].append(line)
    return found


def _jest_text(text: str, ws: Path) -> tuple[dict[str, int], list[TestFailure]]:
    failures = []
    for name, body in _blocks(text, _JEST_HEAD):
        joined = "\n".join(body)
        expected, actual = js_values(joined)
        at = next((m for m in _JEST_AT.finditer(joined) if "node_modules" not in m["file"]), None)
        message = next((ln.strip() for ln in body if ln.strip()), "")
        failures.append(
            TestFailure(
                name=name.replace(" › ", " > "),
                file=reported_path(at["file"], ws) if at else "",
                line=int(at["line"]) if at else None,
                message=message,
                expected=expected,
                actual=actual,
                trace=joined[-MAX_TRACE:],
            )
        )
    return _zero(failed=len(failures)), failures


def _go_text(text: str, ws: Path) -> tuple[dict[str, int], list[TestFailure]]:
    """``go test`` (``-v`` or not): a test's lines are those after its ``=== RUN`` and
    after its ``--- FAIL``, up to the next marker line."""
    said: dict[str, list[str]] = {}
    failed: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        run = re.match(r"^=== (?:RUN|CONT|PAUSE)\s+(\S+)", line)
        fail = _GO_FAIL.match(line)
        marker = run or fail
        if marker is not None:
            current = marker[1]
            if fail:
                failed.append(current)
            said.setdefault(current, [])
        elif line.startswith(("--- ", "=== ", "FAIL", "ok ", "PASS")):
            current = None
        elif current is not None:
            said[current].append(line)
    failures = []
    for name in dict.fromkeys(failed):
        body = said.get(name, [])
        at = next((m for ln in body if (m := _GO_AT.match(ln))), None)
        message = at["msg"].strip() if at else ""
        expected, actual = go_values(message)
        failures.append(
            TestFailure(
                name=name,
                file=reported_path(at["file"], ws) if at else "",
                line=int(at["line"]) if at else None,
                message=message,
                expected=expected,
                actual=actual,
                trace="\n".join(body)[-MAX_TRACE:],
            )
        )
    return _zero(failed=len(failures)), failures


def _bare(text: str, ws: Path) -> list[TestFailure]:
    """A Python traceback's (or a lone error line's) error, as one failure."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    error = next((m for ln in reversed(lines) if (m := _ERROR_LINE.match(ln.strip()))), None)
    if error is None:
        return []
    frames = [m for ln in lines if (m := _PY_FILE.match(ln))]
    last = frames[-1] if frames else None
    message = f"{error['etype']}: {error['msg']}".rstrip(": ")
    expected, actual = pytest_values(error["msg"]) if "assert" in error["msg"] else (None, None)
    return [
        TestFailure(
            name=error["etype"],
            file=reported_path(last["file"], ws) if last else "",
            line=int(last["line"]) if last else None,
            message=message,
            expected=expected,
            actual=actual,
            trace=text[-MAX_TRACE:],
            kind="error",
        )
    ]


def _error_type(failure: TestFailure) -> str:
    for text in (failure.message, failure.trace):
        for line in text.splitlines():
            if found := _ERROR_LINE.match(line.strip()):
                return found["etype"]
    if found := re.search(r"\b([A-Z]\w*(?:Error|Exception))\b", failure.trace):
        return found[1]
    return "AssertionError" if failure.message.startswith("assert") else ""


def _site(failure: TestFailure) -> str:
    raised = [m["site"] for m in _SITE.finditer(failure.trace)]
    if raised:
        return raised[-1]
    return f"{failure.file}:{failure.line}" if failure.file and failure.line else ""


def likely_causes(failures: list[TestFailure]) -> list[dict[str, Any]]:
    """Failures grouped by the site they stopped at, then by error type; largest first."""
    by_site: dict[str, list[TestFailure]] = defaultdict(list)
    for failure in failures:
        by_site[_site(failure) or f"?{failure.name}"].append(failure)
    groups: list[dict[str, Any]] = []
    alone: list[TestFailure] = []
    for site, members in by_site.items():
        if len(members) > 1 and not site.startswith("?"):
            kind = _error_type(members[0])
            groups.append(
                _group("same_site", f"all stop at {site}", members, site=site, error=kind)
            )
        else:
            alone += members
    by_type: dict[str, list[TestFailure]] = defaultdict(list)
    for failure in alone:
        by_type[_error_type(failure) or f"?{failure.name}"].append(failure)
    for kind, members in by_type.items():
        if len(members) > 1 and not kind.startswith("?"):
            groups.append(_group("same_error", f"all raise {kind}", members, error=kind))
        else:
            for one in members:
                where = _site(one)
                why = one.message.splitlines()[0] if one.message else "see its trace"
                groups.append(
                    _group("single", why[:200], [one], site=where, error=_error_type(one))
                )
    groups.sort(key=lambda g: -len(g["tests"]))
    return groups


def _group(
    group: str, cause: str, members: list[TestFailure], *, site: str = "", error: str = ""
) -> dict[str, Any]:
    return {
        "group": group,
        "cause": cause,
        "site": site,
        "error_type": error,
        "tests": [m.name for m in members],
    }
