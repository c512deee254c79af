"""Linters' and type checkers' output read into issues: real ruff and mypy output,
and hand-made output in the documented formats of pyright, flake8, eslint, tsc, go vet."""

from __future__ import annotations

import pytest

from backend.pipelines.checks.lint_parsers import (
    parse_eslint,
    parse_flake8,
    parse_go_vet,
    parse_mypy,
    parse_pyright,
    parse_ruff,
    parse_tsc,
)
from backend.pipelines.checks.results import IssueCategory, IssueSeverity, ToolOutputError
from tests.unit.pipelines.check_fixtures import CAPTURED_AT, HAND_MADE_AT, fixture


def test_ruff_json_gives_file_line_code_and_its_fix() -> None:
    issues = parse_ruff(fixture("ruff_check.json"), "", CAPTURED_AT)
    [unused] = [i for i in issues if i.code == "F401"]
    assert (unused.file, unused.line, unused.column) == ("pkg/calc.py", 1, 8)
    assert (unused.code, unused.category, unused.severity) == (
        "F401",
        IssueCategory.LINT,
        IssueSeverity.ERROR,
    )
    assert unused.suggestion == "Remove unused import: `os`"
    assert unused.tool == "ruff"
    syntax = [i for i in issues if i.code == "invalid-syntax"]
    assert [(i.file, i.line) for i in syntax] == [("pkg/broken.py", 1), ("pkg/broken.py", 1)]


def test_ruff_empty_output_is_no_issue_and_garbage_is_a_typed_error() -> None:
    assert parse_ruff("", "", CAPTURED_AT) == []
    with pytest.raises(ToolOutputError, match="ruff"):
        parse_ruff("error: unexpected argument '--bogus'", "", CAPTURED_AT)
    with pytest.raises(ToolOutputError):
        parse_ruff('{"not": "a list"}', "", CAPTURED_AT)


def test_mypy_json_columns_become_one_based() -> None:
    [issue] = parse_mypy(fixture("mypy.jsonl"), "", CAPTURED_AT)
    assert (issue.file, issue.line, issue.column) == ("pkg/calc.py", 9, 12)
    assert issue.category is IssueCategory.TYPE
    assert issue.code == "return-value"
    assert "Incompatible return value type" in issue.message


def test_mypy_classic_lines_give_the_same_issue_as_its_json() -> None:
    [from_text] = parse_mypy(fixture("mypy_text.txt"), "", CAPTURED_AT)
    [from_json] = parse_mypy(fixture("mypy.jsonl"), "", CAPTURED_AT)
    assert from_text == from_json


def test_a_mypy_note_becomes_the_suggestion_of_the_error_before_it() -> None:
    text = (
        'a.py:3:5: error: Name "foo" is not defined  [name-defined]\n'
        'a.py:3:5: note: Did you mean "food"?\n'
        "Found 1 error in 1 file (checked 1 source file)\n"
    )
    [issue] = parse_mypy(text, "", CAPTURED_AT)
    assert issue.suggestion == 'Did you mean "food"?'
    assert issue.code == "name-defined"


def test_pyright_ranges_are_zero_based_and_rules_are_codes() -> None:
    error, warning = parse_pyright(fixture("pyright.json"), "", HAND_MADE_AT)
    assert (error.file, error.line, error.column, error.code) == (
        "pkg/calc.py",
        9,
        12,
        "reportReturnType",
    )
    assert warning.severity is IssueSeverity.WARNING
    with pytest.raises(ToolOutputError):
        parse_pyright("{}", "", HAND_MADE_AT)


def test_flake8_lines() -> None:
    issues = parse_flake8(fixture("flake8.txt"), "", HAND_MADE_AT)
    assert [(i.file, i.line, i.column, i.code) for i in issues] == [
        ("pkg/calc.py", 1, 1, "F401"),
        ("pkg/ugly.py", 1, 7, "E201"),
        ("pkg/ugly.py", 1, 9, "E231"),
        ("pkg/ugly.py", 2, 5, "W291"),
    ]
    assert issues[-1].severity is IssueSeverity.WARNING


def test_eslint_json_severity_fixes_and_parse_errors() -> None:
    issues = parse_eslint(fixture("eslint.json"), "", HAND_MADE_AT)
    by_code = {i.code: i for i in issues}
    assert by_code["no-unused-vars"].file == "src/app.js"
    assert (by_code["no-unused-vars"].line, by_code["no-unused-vars"].column) == (3, 7)
    assert by_code["eqeqeq"].severity is IssueSeverity.WARNING
    assert by_code["eqeqeq"].suggestion == "Use '===' instead of '=='."
    assert "eslint --fix" in by_code["semi"].suggestion
    fatal = by_code[""]
    assert fatal.file == "src/broken.js" and "Parsing error" in fatal.message
    assert fatal.severity is IssueSeverity.ERROR


def test_tsc_lines_with_a_continued_message() -> None:
    issues = parse_tsc(fixture("tsc.txt"), "", HAND_MADE_AT)
    assert [(i.file, i.line, i.column, i.code) for i in issues] == [
        ("src/app.ts", 3, 7, "TS2322"),
        ("src/util.ts", 10, 15, "TS2345"),
        ("src/other.ts", 1, 1, "TS6133"),
    ]
    assert "Property 'b' is missing" in issues[1].message
    assert all(i.category is IssueCategory.TYPE for i in issues)


def test_go_vet_lines_skip_package_headers() -> None:
    issues = parse_go_vet("", fixture("go_vet.txt"), HAND_MADE_AT)
    assert [(i.file, i.line, i.column) for i in issues] == [
        ("calc/calc.go", 12, 2),
        ("calc/calc.go", 20, 9),
    ]
    assert issues[0].tool == "go vet"
