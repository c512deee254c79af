"""Failing test output of each format the Tester is handed, read into failures and causes.

Pure: the texts are what the frameworks print (their machine formats and their terminal
reports); the integration tests read output from real pytest runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from backend.team.agent_ops.test_output import analyze_output

WS = Path("/work/proj")

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0"
failures="1" skipped="0" tests="2"><testcase classname="tests.test_a" name="test_ok"
file="tests/test_a.py" line="0"/><testcase classname="tests.test_a" name="test_bad"
file="tests/test_a.py" line="4"><failure message="assert 4 == 5">tests/test_a.py:6: AssertionError
</failure></testcase></testsuite></testsuites>"""

JEST_JSON = {
    "numPassedTests": 0, "numFailedTests": 1, "numPendingTests": 0,
    "testResults": [{"name": "/work/proj/src/sum.test.js", "status": "failed", "message": "",
                     "assertionResults": [{
                         "ancestorTitles": ["sum"], "title": "adds", "fullName": "sum adds",
                         "status": "failed", "location": {"line": 3, "column": 5},
                         "failureMessages": ["Error: expect(received).toBe(expected)\n\n"
                                             "Expected: 5\nReceived: 4\n"]}]}],
}  # fmt: skip

GO_JSON = "\n".join(json.dumps(e) for e in [
    {"Action": "run", "Package": "m/calc", "Test": "TestAdd"},
    {"Action": "output", "Package": "m/calc", "Test": "TestAdd",
     "Output": "    calc_test.go:9: got 4, want 5\n"},
    {"Action": "fail", "Package": "m/calc", "Test": "TestAdd"},
    {"Action": "fail", "Package": "m/calc"},
])  # fmt: skip

TRACEBACK = """Traceback (most recent call last):
  File "/work/proj/app/main.py", line 12, in <module>
    run()
  File "/work/proj/app/main.py", line 8, in run
    raise KeyError("token")
KeyError: 'token'
"""


def test_junit_xml_from_any_framework() -> None:
    found = analyze_output(JUNIT, WS)
    assert found["format"] == "junit" and (found["passed"], found["failed"]) == (1, 1)
    (failure,) = found["failures"]
    assert failure["name"] == "tests/test_a.py::test_bad" and failure["line"] == 6
    assert (failure["expected"], failure["actual"]) == ("5", "4")


def test_jest_json_report() -> None:
    found = analyze_output("console noise\n" + json.dumps(JEST_JSON), WS)
    assert found["format"] == "jest/vitest json" and found["failed"] == 1
    (failure,) = found["failures"]
    assert (failure["file"], failure["line"]) == ("src/sum.test.js", 3)
    assert (failure["expected"], failure["actual"]) == ("5", "4")


def test_go_test_json() -> None:
    found = analyze_output(GO_JSON, WS)
    assert found["format"] == "go test -json"
    (failure,) = found["failures"]
    assert failure["line"] == 9 and (failure["expected"], failure["actual"]) == ("5", "4")


def test_a_bare_traceback_is_one_error_at_its_last_frame() -> None:
    found = analyze_output(TRACEBACK, WS)
    assert found["format"] == "traceback" and found["errors"] == 1
    (failure,) = found["failures"]
    assert (failure["file"], failure["line"]) == ("app/main.py", 8)
    assert failure["message"] == "KeyError: 'token'"
    (cause,) = found["causes"]
    assert cause["error_type"] == "KeyError"


def test_a_lone_error_line_and_colours_are_read() -> None:
    found = analyze_output("\x1b[31mAssertionError: assert 1 == 2\x1b[0m", WS)
    (failure,) = found["failures"]
    assert (failure["expected"], failure["actual"]) == ("2", "1")


def test_failures_sharing_an_error_type_but_not_a_site_are_one_cause() -> None:
    text = "\n".join([
        "--- FAIL: TestA (0.00s)", "    a_test.go:3: got 1, want 2",
        "--- FAIL: TestB (0.00s)", "    b_test.go:7: got 3, want 4",
    ])  # fmt: skip
    causes = analyze_output(text, WS)["causes"]
    assert [c["group"] for c in causes] == ["single", "single"]  # no site or type shared
    text = text.replace("got 1, want 2", "ValueError: bad").replace(
        "got 3, want 4", "ValueError: x"
    )
    (cause,) = analyze_output(text, WS)["causes"]
    assert cause["group"] == "same_error" and cause["tests"] == ["TestA", "TestB"]


def test_nothing_recognisable_is_said_not_guessed() -> None:
    found = analyze_output("Ran 3 things. All fine.", WS)
    assert found["format"] == "unrecognised" and found["failures"] == found["causes"] == []


def test_a_passing_pytest_run_is_counted() -> None:
    found = analyze_output("....\n4 passed in 0.05s\n", WS)
    assert found["format"] == "pytest" and found["passed"] == 4 and found["failures"] == []
    verbose = analyze_output("===== 2 passed, 1 skipped in 0.31s =====", WS)
    assert (verbose["passed"], verbose["skipped"]) == (2, 1)
