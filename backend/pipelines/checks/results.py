"""What the Inspector and the Tester hand back: issues, failures and how each tool ran.

Pydantic models, so a report crosses the pipeline bus, the archive or an MCP reply as
JSON unchanged. Paths are workspace-relative POSIX paths; lines and columns are
1-based, ``None`` where a tool does not say. A tool that could not run, crashed or ran
out of time is recorded as such (``ToolRun.status``), never raised: a pipeline decides
what a failed check means, the runner only says what happened.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import ErrorKind, SylkError


class IssueCategory(StrEnum):
    LINT = "lint"
    FORMAT = "format"
    TYPE = "type"
    COMPLIANCE = "compliance"  # the model-driven task check; no tool emits it


class IssueSeverity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class ToolRunStatus(StrEnum):
    CLEAN = "clean"  # ran, found nothing
    ISSUES = "issues"  # ran, found something
    CRASHED = "crashed"  # ran, but failed in a way its output does not explain
    TIMED_OUT = "timed_out"  # killed at the time limit, with everything it started
    NOT_RUNNABLE = "not_runnable"  # the executable could not be started
    SANDBOX_FAILED = "sandbox_failed"  # the sandbox could not be set up; nothing ran


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InspectionIssue(_Frozen):
    file: str
    line: int | None = None
    column: int | None = None
    category: IssueCategory
    severity: IssueSeverity = IssueSeverity.ERROR
    code: str = ""  # the tool's rule id: F401, return-value, TS2322, no-unused-vars
    message: str
    suggestion: str = ""  # the tool's fix, hint or a command that fixes it
    tool: str


class ToolRun(_Frozen):
    tool: str
    argv: list[str]
    exit_code: int | None  # None: it never exited on its own (timeout, not started)
    duration_ms: float
    status: ToolRunStatus
    detail: str = ""  # why it crashed or could not run, in the tool's words where possible


class SkippedTool(_Frozen):
    tool: str
    reason: str


class InspectionReport(_Frozen):
    issues: list[InspectionIssue] = Field(default_factory=list)
    tools_run: list[ToolRun] = Field(default_factory=list)
    skipped: list[SkippedTool] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)  # what was inspected
    level: str | None = None  # the sandbox level the tools ran at (None: nothing ran)

    @property
    def failed_runs(self) -> list[ToolRun]:
        """Runs that crashed, timed out or could not start: their silence proves nothing."""
        good = (ToolRunStatus.CLEAN, ToolRunStatus.ISSUES)
        return [run for run in self.tools_run if run.status not in good]

    @property
    def clean(self) -> bool:
        """No issue and every tool that ran finished; skipped tools do not count."""
        return not self.issues and not self.failed_runs


class TestRunStatus(StrEnum):
    __test__ = False  # not a pytest class, whatever its name

    PASSED = "passed"
    FAILED = "failed"
    NO_TESTS = "no_tests"  # nothing was collected or nothing was asked for
    TIMED_OUT = "timed_out"
    CRASHED = "crashed"  # the framework itself failed (usage, internal or set-up error)
    NOT_RUN = "not_run"  # no framework Sylk can run, or it is not installed


class TestFailure(_Frozen):
    __test__ = False

    name: str  # pytest node id, jest full name, Go test name
    file: str = ""
    line: int | None = None
    message: str = ""
    expected: str | None = None
    actual: str | None = None
    trace: str = ""
    kind: str = (
        "failure"  # "failure" (an assertion), "error" (set-up, collection, crash), "timeout"
    )


class TestReport(_Frozen):
    __test__ = False

    framework: str
    status: TestRunStatus
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[TestFailure] = Field(default_factory=list)
    argv: list[str] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    duration_ms: float = 0.0
    output_tail: str = ""
    detail: str = ""
    level: str | None = None


class CheckError(SylkError):
    """A check cannot be run as asked."""


class CheckPathError(CheckError):
    """A file or test target names something outside the workspace."""

    error_kind = ErrorKind.INVALID

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            f"cannot check {path!r}: {why}",
            help_hint="name files and tests by their path inside the workspace",
            details={"reason": "bad_path", "path": path},
        )
        self.path = path


class ToolOutputError(CheckError):
    """A tool's output is not in the format its parser reads (a version change, a crash)."""

    def __init__(self, tool: str, why: str) -> None:
        super().__init__(f"cannot read {tool}'s output: {why}", details={"reason": "bad_output"})
        self.tool = tool
