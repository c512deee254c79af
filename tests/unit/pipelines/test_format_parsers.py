"""Formatter checks read into one format issue per file that would change."""

from __future__ import annotations

from backend.pipelines.checks.format_parsers import (
    parse_errors,
    parse_file_list,
    parse_unified_diff,
)
from backend.pipelines.checks.results import IssueCategory
from tests.unit.pipelines.check_fixtures import CAPTURED_AT, HAND_MADE_AT, fixture


def test_ruff_format_diff_is_one_issue_at_the_first_changed_line() -> None:
    parse = parse_unified_diff("ruff", "ruff format")
    [issue] = parse(
        fixture("ruff_format_diff.txt"), fixture("ruff_format_diff_stderr.txt"), CAPTURED_AT
    )
    assert (issue.file, issue.line, issue.category) == ("pkg/ugly.py", 1, IssueCategory.FORMAT)
    assert issue.suggestion.startswith("run `ruff format pkg/ugly.py`")
    assert "+def f(a, b):" in issue.suggestion


def test_a_formatter_that_cannot_parse_a_file_says_so_as_an_issue() -> None:
    [issue] = parse_unified_diff("ruff", "ruff format")(
        "", fixture("ruff_format_syntax_stderr.txt"), CAPTURED_AT
    )
    assert (issue.file, issue.line, issue.column, issue.code) == (
        "pkg/broken.py",
        1,
        12,
        "parse-error",
    )


def test_black_diff_headers_carry_timestamps() -> None:
    [issue] = parse_unified_diff("black", "black")(fixture("black_diff.txt"), "", HAND_MADE_AT)
    assert issue.file == "pkg/ugly.py"
    assert issue.suggestion.startswith("run `black pkg/ugly.py`")
    assert (
        parse_errors("black", "error: cannot format pkg/x.py: Cannot parse: 1:4", HAND_MADE_AT)[
            0
        ].file
        == "pkg/x.py"
    )


def test_file_lists_become_one_issue_per_file() -> None:
    issues = parse_file_list("prettier")(fixture("prettier.txt"), "", HAND_MADE_AT)
    assert [i.file for i in issues] == ["src/app.js", "src/style.css"]
    assert parse_file_list("gofmt")("", "", HAND_MADE_AT) == []


def test_a_long_diff_is_cut_in_the_suggestion() -> None:
    body = "".join(f"-x{i}\n+y{i}\n" for i in range(2000))
    [issue] = parse_unified_diff("ruff", "ruff format")(
        f"--- a.py\n+++ a.py\n@@ -5,9 +5,9 @@\n{body}", "", CAPTURED_AT
    )
    assert issue.line == 5
    assert len(issue.suggestion) < 2200 and issue.suggestion.endswith("...")
