"""Expected and actual values out of each framework's wording, and none where none is said."""

from __future__ import annotations

from backend.pipelines.checks.assertion_values import go_values, js_values, pytest_values


def test_pytest_splits_at_the_equality_outside_quotes_and_brackets() -> None:
    assert pytest_values("assert 'a == b' == 'c'") == ("'c'", "'a == b'")
    assert pytest_values("AssertionError: assert {'k': [1, 2]} == {'k': [1]}") == (
        "{'k': [1]}",
        "{'k': [1, 2]}",
    )
    assert pytest_values("assert 3 > 4") == (None, None)
    assert pytest_values("ValueError: boom") == (None, None)
    assert pytest_values("") == (None, None)


def test_js_wordings() -> None:
    assert js_values("Expected: \x1b[32m4\x1b[39m\nReceived: \x1b[31m3\x1b[39m") == ("4", "3")
    assert js_values("AssertionError: expected [ 1 ] to deeply equal [ 2 ]") == ("[ 2 ]", "[ 1 ]")
    assert js_values("TypeError: x is not a function") == (None, None)


def test_go_wordings() -> None:
    assert go_values("Add(1, 2) = 4; got 4, want 3") == ("3", "4")
    assert go_values("want 3, got 4") == ("3", "4")
    assert go_values("expected 3, got 4") == ("3", "4")
    assert go_values("connection refused") == (None, None)
