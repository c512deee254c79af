"""``go test -json`` (test2json events, one JSON object a line) read into test failures.

Each event has ``Action`` (run, pause, cont, pass, fail, skip, output, build-output,
build-fail), ``Package``, ``Test`` (absent for package-level events) and ``Output``.
A test's output lines are gathered until its ``fail``; the ``file_test.go:12: message``
line in it (t.Error / t.Fatal) gives the file, line and message. A package that fails
with no failed test (it did not build, or it panicked outside a test) is one error.
Lines that are not JSON (go's own build errors on stderr) are kept for that error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from backend.pipelines.checks.assertion_values import go_values
from backend.pipelines.checks.paths import reported_path
from backend.pipelines.checks.results import TestFailure

MAX_TRACE = 8000
_LOCATION = re.compile(r"^\s+(?P<file>[\w./-]+_test\.go):(?P<line>\d+):\s?(?P<msg>.*)$")


@dataclass
class GoCounts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[TestFailure] = field(default_factory=list)


def _package_dir(package: str, module: str) -> str:
    """The package's folder in the workspace, when the module path says it ("" if not)."""
    if not module or not (package == module or package.startswith(module + "/")):
        return ""
    return package.removeprefix(module).strip("/")


def parse_go_test(stdout: str, stderr: str, workspace: Path, module: str = "") -> GoCounts:
    """``module`` (go.mod's module path) turns package paths into workspace folders."""
    counts = GoCounts()
    outputs: dict[tuple[str, str], list[str]] = {}
    failed_packages: dict[str, None] = {}
    packages_with_failures: set[str] = set()
    stray = [line for line in stderr.splitlines() if line.strip()]
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            if line:
                stray.append(raw)
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            stray.append(raw)
            continue
        action = event.get("Action")
        package = str(event.get("Package") or event.get("ImportPath") or "")
        test = str(event.get("Test") or "")
        if action in ("output", "build-output"):
            outputs.setdefault((package, test), []).append(str(event.get("Output") or ""))
        elif test and action == "pass":
            counts.passed += 1
        elif test and action == "skip":
            counts.skipped += 1
        elif test and action == "fail":
            counts.failed += 1
            packages_with_failures.add(package)
            counts.failures.append(
                _failure(package, test, outputs.get((package, test), []), workspace, module)
            )
        elif not test and action in ("fail", "build-fail"):
            failed_packages[package] = None
    for package in failed_packages:
        if package in packages_with_failures:
            continue
        text = "".join(outputs.get((package, ""), [])) + "\n".join(stray)
        counts.errors += 1
        first = next(
            (
                ln.strip()
                for ln in text.splitlines()
                if ln.strip() and not ln.startswith(("#", "FAIL"))
            ),
            "the package failed",
        )
        counts.failures.append(
            TestFailure(
                name=package,
                file=_package_dir(package, module),
                message=first,
                trace=text[-MAX_TRACE:],
                kind="error",
            )
        )
    return counts


def _failure(
    package: str, test: str, lines: list[str], workspace: Path, module: str
) -> TestFailure:
    trace = "".join(lines)
    file, number, message = "", None, ""
    for line in lines:
        if found := _LOCATION.match(line.rstrip("\n")):
            folder = _package_dir(package, module)
            file = reported_path(
                f"{folder}/{found['file']}" if folder else found["file"], workspace
            )
            number, message = int(found["line"]), found["msg"].strip()
            break
    if not message:
        message = next(
            (
                ln.strip()
                for ln in lines
                if ln.strip() and not ln.strip().startswith(("=== ", "--- "))
            ),
            "",
        )
    expected, actual = go_values(message)
    return TestFailure(
        name=f"{package}.{test}" if package else test,
        file=file,
        line=number,
        message=message,
        expected=expected,
        actual=actual,
        trace=trace[-MAX_TRACE:],
    )
