"""The Tester's remaining ops, for real: a test plan, failures analysed, the latest run
reported, tests written by the engineer and run, and coverage.

Everything runs on what tool discovery found for the project, in the session's
sandbox (:mod:`backend.pipelines.checks`); writing tests needs a model (an engineer
turn through the engine's answer path, :class:`~backend.team.agent_ops.inspector_ops.AgentAsk`)
and says so when there is none. The latest test run of each session (from
``tester.tests.run``, ``tester.code.generate`` or ``tester.coverage.analyze``) is kept
for ``tester.results.report``.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from backend.agents.tool_actions import EDIT_OPS, actions_from_payload
from backend.errors import ErrorKind, SylkError
from backend.guide.routing.decision import Target
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import (
    ToolCategory,
    ToolDiscoveryRequest,
    ToolDiscoveryResponse,
)
from backend.pipelines.checks import TestReport, relevant_tests, run_tests
from backend.pipelines.checks.paths import reported_path, workspace_relative
from backend.pipelines.checks.tester import FRAMEWORKS, Framework
from backend.pipelines.checks.tool_process import locate_executable, run_tool, short
from backend.skills.models import Guidance, SkillContext, SkillResult
from backend.team.agent_ops.inspector_ops import AgentAsk, Inspection, LatestReports, TaskWork
from backend.team.agent_ops.test_output import analyze_output

TEST_TIMEOUT_S = 600.0
ENGINEER = Target.ENGINEER
_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]+\.py|[^/]+_test\.(py|go)|[^/]+\.(test|spec)\.[cm]?[jt]sx?)$"
)
# Runs the tests under coverage.py, then prints a marker and its JSON report, both
# written in the call's private TMPDIR: nothing lands in the workspace.
_COVERAGE_SHELL = (
    'm=$1; shift; c=$1; shift; export COVERAGE_FILE="$TMPDIR/sylk.coverage"; '
    '"$c" run -m pytest -q -p no:cacheprovider "$@"; r=$?; '
    '"$c" json -q -o "$TMPDIR/sylk-coverage.json" >/dev/null 2>&1; '
    'printf "\\n%s\\n" "$m"; cat "$TMPDIR/sylk-coverage.json" 2>/dev/null; exit $r'
)
MAX_COVERAGE_FILES = 200
TaskOf = Callable[[SkillContext, str], Awaitable[TaskWork]]


class TesterError(SylkError):
    """The Tester cannot do what was asked, and says what would let it."""

    def __init__(self, message: str, hint: str, reason: str) -> None:
        super().__init__(message, help_hint=hint, details={"reason": reason})


class TesterInputError(TesterError):
    error_kind = ErrorKind.INVALID


class TesterNotFoundError(TesterError):
    error_kind = ErrorKind.NOT_FOUND


class TesterStateError(TesterError):
    error_kind = ErrorKind.CONFLICT


_KINDS: dict[ErrorKind, type[TesterError]] = {
    ErrorKind.INVALID: TesterInputError,
    ErrorKind.NOT_FOUND: TesterNotFoundError,
    ErrorKind.CONFLICT: TesterStateError,
}


def _error(message: str, hint: str, reason: str, kind: ErrorKind) -> TesterError:
    return _KINDS[kind](message, hint, reason)


async def _root(ctx: SkillContext) -> Path:
    return await asyncio.to_thread(Path(ctx.workspace).resolve)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


class TesterOps:
    def __init__(
        self,
        tools: ToolDiscovery,
        checks: Inspection,
        reports: LatestReports,
        agents: AgentAsk,
        task_of: TaskOf,
    ) -> None:
        self._tools = tools
        self._checks = checks
        self._reports = reports
        self._agents = agents
        self._task_of = task_of

    async def _discover(self, ctx: SkillContext) -> ToolDiscoveryResponse:
        request = ToolDiscoveryRequest(session_id=ctx.session_id, requesting_agent="tester")
        protected = ctx.confinement.protected
        return await self._tools.adiscover(request, Path(ctx.workspace), protected=protected)

    async def _files(self, ctx: SkillContext, paths: list[str], task_id: str | None) -> list[str]:
        task = await self._task_of(ctx, task_id) if task_id else None
        files = paths or list(task.files if task else ()) or await self._checks.changed(ctx)
        if not files:
            raise _error(
                "no files to test: none were named, no task given, and this session has "
                "changed none", 'pass paths, e.g. {"paths": ["src/app.py"]}', "nothing_to_test",
                ErrorKind.INVALID,
            )  # fmt: skip
        root = await _root(ctx)
        rel = [workspace_relative(f, root) for f in files]
        missing = [f for f in rel if not (root / f).is_file()]
        if missing:
            raise _error(f"no such file: {', '.join(missing)}", "name files that exist in "
                              "the workspace", "no_such_file", ErrorKind.NOT_FOUND)  # fmt: skip
        return rel

    @staticmethod
    def _framework(found: ToolDiscoveryResponse) -> Framework:
        names = [t.name for t in found.tools if t.category is ToolCategory.TEST_FRAMEWORK]
        framework = next((FRAMEWORKS[n] for n in names if n in FRAMEWORKS), None)
        if framework is None:
            raise _error(
                "no test framework Sylk can run was found (discovered: "
                f"{', '.join(names) or 'none'})",
                "configure pytest, jest, vitest or go test in the project", "no_test_framework",
                ErrorKind.NOT_FOUND,
            )  # fmt: skip
        return framework

    async def plan(self, ctx: SkillContext, paths: list[str], task_id: str | None) -> SkillResult:
        files = await self._files(ctx, paths, task_id)
        framework = self._framework(await self._discover(ctx))
        root = await _root(ctx)
        hidden = ctx.confinement.protected

        def tests_for(some: list[str]) -> list[str]:
            return relevant_tests(root, some, framework.name, protected=hidden)

        tests = await asyncio.to_thread(tests_for, files)
        sources = [f for f in files if not is_test_file(f)]
        untested = [f for f in sources if not await asyncio.to_thread(tests_for, [f])]
        exe = locate_executable(framework.executable, framework.ecosystem, root, None)
        base = _command(framework, exe, root)
        line = " ".join([base, *(shlex.quote(t) for t in tests)])
        plan = {
            "framework": framework.name, "files": files, "tests": tests, "untested": untested,
            "command": line if tests else "", "installed": exe is not None, "task_id": task_id,
        }  # fmt: skip
        if untested:
            plan["next"] = "tester.code.generate writes tests for the untested files (a model)"
        guidance = []
        if tests and exe is not None:
            args = {"command": base, "paths": [t.partition("::")[0] for t in tests]}
            guidance.append(Guidance(op="tester.tests.run", prose="Run them", args=args))
        return SkillResult(result=plan, guidance=guidance)

    async def analyze(self, ctx: SkillContext, output: str) -> dict[str, Any]:
        return await asyncio.to_thread(analyze_output, output, await _root(ctx))

    async def results(self, ctx: SkillContext) -> dict[str, Any]:
        latest = self._reports.latest("test_run", ctx.session_id)
        if latest is None:
            return {"ran": False, "message": "no test run in this session yet: tester.tests.run "
                    "runs the tests"}  # fmt: skip
        return {"ran": True, **latest}

    async def keep_run(self, ctx: SkillContext, op: str, result: dict[str, Any]) -> None:
        """``tester.tests.run``'s result (a command's output) kept as the latest run."""
        text = f"{result.get('stdout', '')}\n{result.get('stderr', '')}"
        analysed = await asyncio.to_thread(analyze_output, text, await _root(ctx))
        kept = {k: result.get(k) for k in ("command", "exit_code", "duration_ms", "sandbox")}
        kept |= {"passed_run": result.get("exit_code") == 0, **analysed}
        kept["output_tail"] = text.strip()[-4000:]
        self._reports.keep("test_run", ctx.session_id, op, kept)

    async def generate(self, ctx: SkillContext, paths: list[str], task_id: str | None) -> Any:
        if ctx.agent == ENGINEER.value:
            raise _error(
                "the engineer writes tests with its own edit ops",
                "use engineer.file.write",
                "caller_is_engineer",
                ErrorKind.CONFLICT,
            )
        if not self._agents.can(ctx, ENGINEER.value):
            raise _error(
                "tester.code.generate needs a model: the engineer writes the tests, and no "
                "model is configured for it", "configure a provider ([providers] in the "
                "config, or --provider)", "model_needed", ErrorKind.CONFLICT,
            )  # fmt: skip
        planned = (await self.plan(ctx, paths, task_id)).result
        text = "\n".join([
            f"Write {planned['framework']} tests for: {', '.join(planned['files'])}.",
            "Follow the project's conventions; put them in test files; do not run them.",
            f"Existing tests to extend or mirror: {', '.join(planned['tests']) or 'none'}.",
        ])  # fmt: skip
        record = await self._agents.answer(ctx, ENGINEER, text)
        written = [
            a.title for a in actions_from_payload(record.payload)
            if a.op in EDIT_OPS and a.status == "ok" and is_test_file(a.title)
        ]  # fmt: skip
        written = [reported_path(w, await _root(ctx)) for w in dict.fromkeys(written)]
        said = str(record.payload.get("text") or "")[:2000]
        if not written:
            return {"written": [], "engineer_said": said, "note": "the engineer wrote no test file"}
        found = await self._discover(ctx)
        report = await run_tests(
            Path(ctx.workspace), written, found, ctx.confinement, TEST_TIMEOUT_S
        )
        self._reports.keep("test_run", ctx.session_id, "tester.code.generate", _run_body(report))
        return {"written": written, "engineer_said": said, "run": _run_body(report)}

    async def coverage(self, ctx: SkillContext, paths: list[str]) -> dict[str, Any]:
        root = await _root(ctx)
        framework = self._framework(await self._discover(ctx))
        if framework.name != "pytest":
            raise _error(f"coverage is measured for pytest projects only, not {framework.name}",
                              "run your framework's coverage yourself", "coverage_unsupported",
                              ErrorKind.INVALID)  # fmt: skip
        exe = locate_executable("coverage", "python", root, None)
        if exe is None:
            raise _error(
                "coverage tool not found: neither the project's environment nor PATH has "
                "coverage.py", "install it where the tests run: pip install coverage "
                "(or pytest-cov)", "coverage_not_found", ErrorKind.NOT_FOUND,
            )  # fmt: skip
        files = [workspace_relative(p, root) for p in paths] or await self._checks.changed(ctx)
        files = [f for f in files if f.endswith(".py") and not is_test_file(f)]
        marker = f"--sylk-coverage-{secrets.token_hex(8)}--"
        argv = ["/bin/sh", "-c", _COVERAGE_SHELL, "sylk-coverage", marker, exe]
        out = await run_tool(argv, workspace=root, confinement=ctx.confinement,
                             timeout_s=TEST_TIMEOUT_S)  # fmt: skip
        tests_said, _, report = out.stdout.rpartition(f"\n{marker}\n")
        try:
            data = json.loads(report)
        except json.JSONDecodeError:
            why = out.detail or short(out.stderr or out.stdout)
            raise _error(f"coverage wrote no report: {why}", "run the tests with "
                              "tester.tests.run to see why", "no_coverage_report",
                              ErrorKind.CONFLICT) from None  # fmt: skip
        tests = analyze_output(tests_said + "\n" + out.stderr, root)
        run = {"command": "coverage run -m pytest", "exit_code": out.exit_code,
               "passed_run": out.exit_code == 0, **tests}  # fmt: skip
        self._reports.keep("test_run", ctx.session_id, "tester.coverage.analyze", run)
        measured = {reported_path(k, root): v for k, v in data.get("files", {}).items()}
        shown = files or sorted(measured)[:MAX_COVERAGE_FILES]
        return {
            "tool": "coverage",
            "total_percent": round(float(data.get("totals", {}).get("percent_covered", 0.0)), 1),
            "tests": {k: tests[k] for k in ("passed", "failed", "errors")},
            "for": "the named or changed files" if files else "every measured file",
            "files": [_file_coverage(f, measured.get(f)) for f in shown],
        }


def _file_coverage(file: str, data: dict[str, Any] | None) -> dict[str, Any]:
    if data is None:
        return {"file": file, "percent": 0.0, "note": "never imported by the tests"}
    missing = sorted(int(n) for n in data.get("missing_lines", []))
    percent = float(data.get("summary", {}).get("percent_covered", 0.0))
    return {"file": file, "percent": round(percent, 1), "uncovered_lines": _ranges(missing)}


def _ranges(lines: list[int]) -> list[str]:
    out: list[list[int]] = []
    for n in lines:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [f"{a}" if a == b else f"{a}-{b}" for a, b in out]


def _run_body(report: TestReport) -> dict[str, Any]:
    return report.model_dump(mode="json", exclude={"output_tail"}) | {
        "output_tail": report.output_tail[-2000:]
    }


def _command(framework: Framework, exe: str | None, root: Path) -> str:
    shown = framework.executable
    if exe is not None:
        path = Path(exe)
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    extra = {"pytest": "-q", "jest": "--runTestsByPath", "vitest": "run", "go test": "test"}
    return f"{shlex.quote(shown)} {extra[framework.name]}"
