"""The Inspector's and the Tester's tool work: checks and tests run in the sandbox.

- :func:`inspect`: the project's linters, formatters and type checkers on the modified
  files -> :class:`InspectionReport` (issues, tools run, tools skipped and why).
- :func:`run_tests`: the project's test framework on the relevant tests ->
  :class:`TestReport` (counts, failures with expected/actual, timeouts named).
- :func:`relevant_tests`: which tests a set of modified files calls for.

Parsers (pure, one per tool format) live in ``lint_parsers``, ``format_parsers``,
``pytest_report``, ``js_test_report`` and ``go_test_report``; how each tool is run, in
``check_table``. The model-driven parts (task compliance, writing tests) are not here.
"""

from backend.pipelines.checks.inspector import inspect
from backend.pipelines.checks.results import (
    CheckError,
    CheckPathError,
    InspectionIssue,
    InspectionReport,
    IssueCategory,
    IssueSeverity,
    SkippedTool,
    TestFailure,
    TestReport,
    TestRunStatus,
    ToolOutputError,
    ToolRun,
    ToolRunStatus,
)
from backend.pipelines.checks.test_targets import relevant_tests
from backend.pipelines.checks.tester import run_tests

__all__ = [
    "CheckError",
    "CheckPathError",
    "InspectionIssue",
    "InspectionReport",
    "IssueCategory",
    "IssueSeverity",
    "SkippedTool",
    "TestFailure",
    "TestReport",
    "TestRunStatus",
    "ToolOutputError",
    "ToolRun",
    "ToolRunStatus",
    "inspect",
    "relevant_tests",
    "run_tests",
]
