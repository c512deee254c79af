"""The Tester's run: the project's test framework on the relevant tests, in the sandbox,
its report read into counts and failures.

Frameworks: pytest (node ids or paths; its JUnit XML report is written into the call's
private temp dir and printed after a per-call marker line, so it is read whole and
never lands in the workspace), jest (``--json --testLocationInResults``, targets by
path), vitest (``run --reporter=json``) and go test (``-json``, packages ``./dir``).
The first test framework in discovery's answer that Sylk can run is used.

``targets`` None runs the whole suite; an empty list runs nothing (``NO_TESTS``): pass
:func:`~.test_targets.relevant_tests` for a pipeline's modified files. A run killed at
the time limit is ``TIMED_OUT``, naming the test that was running when pytest's verbose
output says it. Nothing a test does raises; a report always comes back.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.knowledge.tool_discovery.models import ToolCategory
from backend.pipelines.checks.go_test_report import parse_go_test
from backend.pipelines.checks.inspector import Discovered, discovered_tools
from backend.pipelines.checks.js_test_report import parse_js_report
from backend.pipelines.checks.paths import as_argument, workspace_relative
from backend.pipelines.checks.pytest_report import parse_pytest_junit
from backend.pipelines.checks.results import (
    TestFailure,
    TestReport,
    TestRunStatus,
    ToolOutputError,
    ToolRunStatus,
)
from backend.pipelines.checks.tool_process import ToolOutcome, locate_executable, run_tool, short
from backend.sandbox import Confines, SandboxLevel

TAIL = 4000
# Runs pytest, then prints the marker and the JUnit report from the call's own TMPDIR.
_PYTEST_SHELL = (
    'm=$1; shift; "$@" --junitxml="$TMPDIR/sylk-junit.xml"; c=$?; '
    'printf "\\n%s\\n" "$m"; cat "$TMPDIR/sylk-junit.xml" 2>/dev/null; exit $c'
)
_PYTEST_ARGS = (
    "-v",
    "--color=no",
    "-p",
    "no:cacheprovider",
    "-o",
    "junit_family=xunit1",
    "-o",
    "junit_logging=no",
)
_RUNNING = re.compile(r"^(?P<node>\S+::\S+)\s*(?P<rest>.*)$")
_RESULTS = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


@dataclass(frozen=True)
class Framework:
    name: str
    executable: str
    ecosystem: str


FRAMEWORKS = {
    f.name: f
    for f in (
        Framework("pytest", "pytest", "python"),
        Framework("jest", "jest", "node"),
        Framework("vitest", "vitest", "node"),
        Framework("go test", "go", "go"),
    )
}


@dataclass
class _Counts:
    passed: int
    failed: int
    errors: int
    skipped: int
    failures: list[TestFailure]


async def run_tests(
    workspace: Path,
    targets: Sequence[str] | None,
    discovered: Discovered,
    confinement: Confines,
    timeout_s: float = 600.0,
    *,
    path_env: str | None = None,
    level: SandboxLevel | None = None,
) -> TestReport:
    """Run the discovered framework on ``targets``; see the module doc."""
    root = await asyncio.to_thread(workspace.resolve)
    names = [
        t.name for t in discovered_tools(discovered) if t.category is ToolCategory.TEST_FRAMEWORK
    ]
    framework = next((FRAMEWORKS[n] for n in names if n in FRAMEWORKS), None)
    if framework is None:
        found = ", ".join(names) or "none"
        return TestReport(
            framework=names[0] if names else "",
            status=TestRunStatus.NOT_RUN,
            detail=f"no test framework Sylk can run (discovered: {found})",
        )
    wanted = None if targets is None else [_target(t, root) for t in targets]
    if wanted == []:
        return TestReport(
            framework=framework.name,
            status=TestRunStatus.NO_TESTS,
            detail="no relevant tests to run",
        )
    exe = locate_executable(framework.executable, framework.ecosystem, root, path_env)
    if exe is None:
        return TestReport(
            framework=framework.name,
            status=TestRunStatus.NOT_RUN,
            targets=wanted or [],
            detail=f"{framework.executable} is not installed",
        )
    marker = f"--sylk-junit-{secrets.token_hex(8)}--"
    argv = _argv(framework, exe, wanted or [], marker)
    out = await run_tool(
        argv, workspace=root, confinement=confinement, timeout_s=timeout_s, level=level
    )
    stdout, report_text = out.stdout, ""
    if framework.name == "pytest" and f"\n{marker}\n" in stdout:
        stdout, _, report_text = stdout.rpartition(f"\n{marker}\n")
    base = TestReport(
        framework=framework.name,
        status=TestRunStatus.CRASHED,
        argv=argv,
        targets=wanted or [],
        exit_code=out.exit_code,
        duration_ms=out.duration_ms,
        output_tail=_tail(stdout, out.stderr),
        level=out.level,
    )
    if not out.finished:
        return _unfinished(base, out, stdout, timeout_s)
    try:
        counts = _parse(framework, stdout, out.stderr, report_text, root)
    except ToolOutputError as exc:
        return base.model_copy(update={"detail": f"{exc.message}; {short(out.stderr or stdout)}"})
    return base.model_copy(
        update={
            "status": _status(framework, counts, out.exit_code),
            "passed": counts.passed,
            "failed": counts.failed,
            "errors": counts.errors,
            "skipped": counts.skipped,
            "failures": counts.failures,
        }
    )


def _target(target: str, root: Path) -> str:
    """A node id or path checked to lie in the workspace; never an option."""
    path, sep, rest = target.partition("::")
    rel = workspace_relative(path, root)
    return as_argument(rel) + sep + rest


def _argv(framework: Framework, exe: str, targets: list[str], marker: str) -> list[str]:
    if framework.name == "pytest":
        return ["/bin/sh", "-c", _PYTEST_SHELL, "sylk-tests", marker, exe, *_PYTEST_ARGS, *targets]
    if framework.name == "jest":
        paths = ["--runTestsByPath", *targets] if targets else []
        return [exe, "--json", "--testLocationInResults", "--ci", *paths]
    if framework.name == "vitest":
        return [exe, "run", "--reporter=json", *targets]
    return [exe, "test", "-json", *(targets or ["./..."])]


def _go_module(root: Path) -> str:
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    found = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    return found[1] if found else ""


def _parse(framework: Framework, stdout: str, stderr: str, report: str, root: Path) -> _Counts:
    if framework.name == "pytest":
        if not report.strip():
            raise ToolOutputError("pytest", "it wrote no JUnit report")
        c = parse_pytest_junit(report, root)
    elif framework.name == "go test":
        c = parse_go_test(stdout, stderr, root, _go_module(root))  # type: ignore[assignment]
    else:
        c = parse_js_report(framework.name, stdout, root)  # type: ignore[assignment]
    return _Counts(c.passed, c.failed, c.errors, c.skipped, c.failures)


def _status(framework: Framework, counts: _Counts, exit_code: int | None) -> TestRunStatus:
    if counts.failed or counts.errors:
        return TestRunStatus.FAILED
    if not counts.passed and not counts.skipped:
        return TestRunStatus.NO_TESTS if exit_code in (0, 5) else TestRunStatus.CRASHED
    if exit_code != 0:
        return TestRunStatus.CRASHED  # everything passed, yet the framework failed
    return TestRunStatus.PASSED


def _unfinished(base: TestReport, out: ToolOutcome, stdout: str, timeout_s: float) -> TestReport:
    if out.status is not ToolRunStatus.TIMED_OUT:
        status = (
            TestRunStatus.NOT_RUN
            if out.status is ToolRunStatus.NOT_RUNNABLE
            else TestRunStatus.CRASHED
        )
        return base.model_copy(update={"status": status, "detail": out.detail})
    running = _running_test(stdout)
    failures = (
        [
            TestFailure(
                name=running,
                file=running.partition("::")[0],
                kind="timeout",
                message=f"still running when the run was killed after {timeout_s:g}s",
            )
        ]
        if running
        else []
    )
    detail = f"killed after {timeout_s:g}s" + (f" while {running} was running" if running else "")
    return base.model_copy(
        update={"status": TestRunStatus.TIMED_OUT, "failures": failures, "detail": detail}
    )


def _running_test(stdout: str) -> str:
    """The test pytest -v announced last without a result after it: the one that hung."""
    for line in reversed(stdout.splitlines()):
        found = _RUNNING.match(line.strip())
        if found is None:
            continue
        return "" if any(word in found["rest"] for word in _RESULTS) else found["node"]
    return ""


def _tail(stdout: str, stderr: str) -> str:
    text = stdout.rstrip() + ("\n--- stderr ---\n" + stderr.rstrip() if stderr.strip() else "")
    return text[-TAIL:]
