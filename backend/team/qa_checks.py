"""Session QA's checks and its record: what the session changed, inspected and tested.

After a plan's DAG passes, the session's QA runs the project's own tools (tool discovery's
answer) in the session's sandbox: the linters, formatters and type checkers on every
file the session changed (its checkpoints' diff against its start), then the test
framework on the whole suite. Inspection is kept to the changed files on purpose: a
whole-project lint would send the fix loop after problems this session did not cause.

What QA found and decided is a :class:`QaRecord`, kept in the session's metadata
(``qa``), so ``/qa`` and ``/plan`` can say where it stands after a restart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.checkpoints.records import SessionDiff
from backend.errors import ErrorKind, SylkError
from backend.events import ChoiceOption, ChoiceQuestion
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest, ToolDiscoveryResponse
from backend.pipelines.checks import InspectionReport, TestReport, TestRunStatus, inspect, run_tests
from backend.pipelines.feedback import failure_line, issue_line
from backend.sandbox import Confines

METADATA_KEY = "qa"
FINDINGS_KEPT = 200  # findings one record keeps (a broken project can report thousands)
TEXT_MAX = 400
FAILING_TESTS = (TestRunStatus.FAILED, TestRunStatus.TIMED_OUT, TestRunStatus.CRASHED)
ACTIONS = ("status", "run", "skip-tests", "override", "stop")
USAGE = "/qa [status|run|skip-tests|override|stop]"
Stage = Literal["inspecting", "testing", "awaiting_fix", "complete", "stopped"]


class QaCommandError(SylkError):
    """``/qa`` asked for something that cannot be done now (or an unknown action)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, message: str, reason: str, hint: str = USAGE) -> None:
        super().__init__(message, help_hint=hint, details={"reason": reason})


class Finding(BaseModel):
    """One problem QA found: an inspection issue or a failing test, as one line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["issue", "failure"]
    file: str = ""
    line: int | None = None
    text: str


class QaRecord(BaseModel):
    """Where the session's QA stands: the plans checked, the stage, what is outstanding."""

    model_config = ConfigDict(extra="ignore")

    plan_id: str  # the plan whose work QA checks (fix plans keep it)
    plans: list[str] = Field(default_factory=list)  # that plan, then each fix plan run
    stage: Stage = "inspecting"
    rounds: int = 0  # fix plans made so far
    findings: list[Finding] = Field(default_factory=list)  # outstanding
    overridden: list[Finding] = Field(default_factory=list)  # accepted by the user
    skip_tests: bool = False
    override_next: bool = False  # /qa override before the inspection ran
    fix_plan: str | None = None  # the fix plan waiting for the user or running
    inspected: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)  # "ruff: clean", "mypy: crashed"
    tests: dict[str, Any] | None = None  # framework, status, counts
    summary: dict[str, Any] | None = None  # the last completion summary


def listing(findings: list[Finding], shown: int = 10) -> str:
    """The findings as lines for the user, the first ``shown`` of them."""
    lines = [f"- {f.text}" for f in findings[:shown]]
    if len(findings) > shown:
        lines.append(f"- ... and {len(findings) - shown} more (/qa status)")
    return "\n".join(lines)


def round_question(record: QaRecord) -> ChoiceQuestion:
    """At the loop bound: one more fix round, or stop (nobody answering stops it)."""
    return ChoiceQuestion(
        title=f"Session QA still fails after {record.rounds} fix rounds",
        prompt=listing(record.findings),
        options=[ChoiceOption("again", "One more fix round", "the Architect tries again"),
                 ChoiceOption("stop", "Stop", "back to planning, findings listed", True)],
    )  # fmt: skip


def changed_files(diff: SessionDiff) -> tuple[list[str], list[str], list[str]]:
    """(created, modified, deleted) paths of the session's checkpoints' diff."""
    by: dict[str, list[str]] = {"added": [], "modified": [], "deleted": []}
    for change in diff.files:
        if "__pycache__" not in change.path.split("/"):  # bytecode the test runs left
            by[change.status].append(change.path)
    return by["added"], by["modified"], by["deleted"]


def inspection_findings(report: InspectionReport) -> list[Finding]:
    return [
        Finding(
            kind="issue", file=i.file, line=i.line, text=issue_line(i).removeprefix("- ")[:TEXT_MAX]
        )
        for i in report.issues[:FINDINGS_KEPT]
    ]


def test_findings(report: TestReport) -> list[Finding]:
    """The failing tests (a crashed or hung run is one finding saying so); none when passed."""
    if report.status not in FAILING_TESTS:
        return []
    found = [
        Finding(
            kind="failure",
            file=f.file,
            line=f.line,
            text=failure_line(f).removeprefix("- ")[:TEXT_MAX],
        )
        for f in report.failures[:FINDINGS_KEPT]
    ]
    if not found:
        why = report.detail or report.output_tail[-TEXT_MAX:] or "no detail"
        found.append(Finding(kind="failure", text=f"{report.framework} {report.status}: {why}"))
    return found


def tool_lines(report: InspectionReport) -> list[str]:
    ran = [f"{run.tool}: {run.status.value}" for run in report.tools_run]
    return ran + [f"{s.tool}: skipped ({s.reason})" for s in report.skipped]


def test_counts(report: TestReport) -> dict[str, Any]:
    return {
        "framework": report.framework,
        "status": report.status.value,
        "passed": report.passed,
        "failed": report.failed,
        "errors": report.errors,
        "skipped": report.skipped,
        "detail": report.detail,
    }


@dataclass(frozen=True)
class QaChecks:
    """The project's tools as discovery finds them, run in the session's sandbox."""

    tools: ToolDiscovery
    confinement: Callable[[Path], Confines]
    inspect_timeout_s: float = 120.0
    test_timeout_s: float = 600.0

    async def _found(self, session_id: str, workspace: Path) -> tuple[Confines, Any]:
        confines = self.confinement(workspace)
        request = ToolDiscoveryRequest(session_id=session_id, requesting_agent="inspector")
        found: ToolDiscoveryResponse = await self.tools.adiscover(
            request, workspace, protected=confines.protected
        )
        return confines, found

    async def inspect(self, session_id: str, workspace: Path, files: list[str]) -> InspectionReport:
        confines, found = await self._found(session_id, workspace)
        return await inspect(workspace, files, found, confines, self.inspect_timeout_s)

    async def test(self, session_id: str, workspace: Path) -> TestReport:
        """Every test the framework finds (``targets`` None: the whole suite)."""
        confines, found = await self._found(session_id, workspace)
        return await run_tests(workspace, None, found, confines, self.test_timeout_s)
