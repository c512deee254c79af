"""Test frameworks' reports read into counts and failures: real pytest JUnit XML, and
hand-made jest, vitest and go test -json output in their documented formats."""

from __future__ import annotations

import pytest

from backend.pipelines.checks.go_test_report import parse_go_test
from backend.pipelines.checks.js_test_report import parse_js_report
from backend.pipelines.checks.pytest_report import node_id, parse_pytest_junit
from backend.pipelines.checks.results import ToolOutputError
from tests.unit.pipelines.check_fixtures import CAPTURED_AT, HAND_MADE_AT, fixture


def test_pytest_junit_counts_and_failures() -> None:
    report = parse_pytest_junit(fixture("pytest_failures.xml"), CAPTURED_AT)
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 4, 0, 1)
    by_name = {f.name: f for f in report.failures}
    bad = by_name["tests/test_calc.py::test_add_bad"]
    assert (bad.file, bad.line) == ("tests/test_calc.py", 9)
    assert (bad.expected, bad.actual) == ("4", "3")
    assert bad.message.startswith("assert 3 == 4")
    assert "tests/test_calc.py:9: AssertionError" in bad.trace
    assert (
        by_name["tests/test_calc.py::test_str"].expected,
        by_name["tests/test_calc.py::test_str"].actual,
    ) == ("'abd'", "'abc'")
    assert by_name["tests/test_calc.py::test_list"].expected == "[1, 2, 4]"
    raised = by_name["tests/test_calc.py::test_raises"]
    assert (raised.expected, raised.actual, raised.message) == (None, None, "ValueError: boom")


def test_a_collection_error_is_an_error_named_by_its_file() -> None:
    report = parse_pytest_junit(fixture("pytest_collection_error.xml"), CAPTURED_AT)
    [error] = report.failures
    assert (report.errors, error.kind, error.name, error.file) == (
        1,
        "error",
        "tests/test_calc.py",
        "tests/test_calc.py",
    )
    assert "ModuleNotFoundError" in error.trace


def test_a_junit_report_with_entities_or_broken_xml_is_refused() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuites>&a;</testsuites>'
    with pytest.raises(ToolOutputError, match="DOCTYPE"):
        parse_pytest_junit(bomb, CAPTURED_AT)
    with pytest.raises(ToolOutputError, match="not XML"):
        parse_pytest_junit("<testsuites><testcase", CAPTURED_AT)


def test_node_ids_for_classes_and_parameters() -> None:
    assert (
        node_id("tests/test_a.py", "tests.test_a.TestX", "test_y[1-2]")
        == "tests/test_a.py::TestX::test_y[1-2]"
    )
    assert node_id("tests/test_a.py", "tests.test_a", "test_z") == "tests/test_a.py::test_z"


def test_jest_json_failures_with_expected_and_received() -> None:
    report = parse_js_report("jest", fixture("jest.json"), HAND_MADE_AT)
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 1, 1, 1)
    failure, suite_error = report.failures
    assert (failure.name, failure.file, failure.line) == ("sum adds wrongly", "src/sum.test.js", 8)
    assert (failure.expected, failure.actual) == ("4", "3")
    assert "\x1b" not in failure.trace
    assert (suite_error.kind, suite_error.file) == ("error", "src/broken.test.js")
    assert "Cannot find module" in suite_error.trace


def test_vitest_json_after_console_output() -> None:
    report = parse_js_report("vitest", fixture("vitest.json"), HAND_MADE_AT)
    assert (report.passed, report.failed) == (2, 1)
    [failure] = report.failures
    assert (failure.name, failure.file, failure.line) == ("math half", "src/math.test.ts", 5)
    assert (failure.expected, failure.actual) == ("2", "1.5")
    with pytest.raises(ToolOutputError):
        parse_js_report("vitest", "no report at all", HAND_MADE_AT)


def test_go_test_json_failures_and_a_package_that_did_not_build() -> None:
    report = parse_go_test(fixture("go_test.jsonl"), "", HAND_MADE_AT, "example.com/demo")
    assert (report.passed, report.failed, report.errors, report.skipped) == (1, 1, 1, 1)
    failure, build = report.failures
    assert failure.name == "example.com/demo/calc.TestHalf"
    assert (failure.file, failure.line) == ("calc/calc_test.go", 14)
    assert (failure.expected, failure.actual) == ("2", "1")
    assert (build.kind, build.file) == ("error", "broken")
    assert build.message == "broken/broken.go:5:9: undefined: missing"
