"""The inspector's and tester's reports, told to the engineer as feedback it can act on.

Each issue and failure becomes one line naming the file and line first (``path:line``,
the form editors and models both jump to), then the rule or test and the message, then
the tool's suggestion or the expected and actual values. A tool that crashed or timed out
is said too: its silence is no pass. Long reports are cut, saying how many were left out.
"""

from __future__ import annotations

from backend.pipelines.checks import (
    InspectionIssue,
    InspectionReport,
    TestFailure,
    TestReport,
    TestRunStatus,
)
from backend.pipelines.context import InspectorFeedback, TesterFeedback

MAX_LINES = 40
MAX_TRACE = 600
PASSING = (TestRunStatus.PASSED, TestRunStatus.NO_TESTS, TestRunStatus.NOT_RUN)


def _where(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line else file


def issue_line(issue: InspectionIssue) -> str:
    code = f" {issue.code}" if issue.code else ""
    text = f"- {_where(issue.file, issue.line)}: [{issue.tool}{code}] {issue.category}: "
    text += issue.message
    return text + (f" (suggestion: {issue.suggestion})" if issue.suggestion else "")


def failure_line(failure: TestFailure) -> str:
    text = f"- {_where(failure.file, failure.line)}: {failure.name} ({failure.kind})"
    if failure.message:
        text += f": {failure.message.splitlines()[0]}"
    if failure.expected is not None or failure.actual is not None:
        text += f" [expected {failure.expected!s}, actual {failure.actual!s}]"
    return text


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], f"- ... and {len(lines) - MAX_LINES} more"]


def feedback_from_inspection(report: InspectionReport, loop: int) -> InspectorFeedback:
    """Feedback from one inspection; passed when the report is clean."""
    if report.clean:
        return InspectorFeedback(loop=loop, passed=True, text="inspection passed")
    lines = [issue_line(i) for i in report.issues]
    lines += [f"- {r.tool} {r.status}: {r.detail}".rstrip(": ") for r in report.failed_runs]
    head = f"The inspector found {len(report.issues)} issue(s) in your changes; fix them:"
    return InspectorFeedback(
        loop=loop,
        passed=False,
        issues=list(report.issues),
        failed_runs=report.failed_runs,
        text="\n".join([head, *_cut(lines)]),
    )


def feedback_from_tests(report: TestReport, loop: int) -> TesterFeedback:
    """Feedback from one test run; passed when nothing failed (or nothing could run)."""
    run = report.passed + report.failed + report.errors
    if report.status in PASSING:
        text = f"tests {report.status}: {report.passed} passed"
        text += f" ({report.detail})" if report.detail else ""
        return TesterFeedback(
            loop=loop,
            passed=True,
            status=report.status,
            tests_run=run,
            tests_passed=report.passed,
            text=text,
        )
    head = (
        f"The tests {report.status} ({report.passed} passed, {report.failed} failed, "
        f"{report.errors} errors); fix the code or the test:"
    )
    lines = [failure_line(f) for f in report.failures]
    if not lines:
        lines = [f"- {report.detail or report.output_tail[-MAX_TRACE:]}"]
    return TesterFeedback(
        loop=loop,
        passed=False,
        status=report.status,
        tests_run=run,
        tests_passed=report.passed,
        failures=list(report.failures),
        text="\n".join([head, *_cut(lines)]),
    )


def first_finding(feedback: InspectorFeedback | TesterFeedback, width: int = 160) -> str:
    """What a one-line notice says sent the task back to its engineer: the first issue
    (where, rule, message) or failing test (where, name, message), else the first line."""
    if isinstance(feedback, InspectorFeedback) and feedback.issues:
        issue = feedback.issues[0]
        text = f"{_where(issue.file, issue.line)}: {issue.code or issue.tool} {issue.message}"
    elif isinstance(feedback, TesterFeedback) and feedback.failures:
        failure = feedback.failures[0]
        name = failure.name.removeprefix(f"{failure.file}::")  # a pytest node id: its file
        text = f"{_where(failure.file, failure.line)}: {name}"
        text += f": {failure.message.splitlines()[0]}" if failure.message.strip() else ""
    else:
        lines = [line.strip() for line in feedback.text.splitlines() if line.strip()]
        listed = [line[2:] for line in lines[1:] if line.startswith("- ")]
        text = listed[0] if listed else (lines[0] if lines else "")
    more = len(feedback.issues if isinstance(feedback, InspectorFeedback) else feedback.failures)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text + (f" (and {more - 1} more)" if more > 1 else "")
