"""The Tester's ops through the engine's gateway, as a model calls them, on a real
project with the real pytest and coverage.py run in the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from tests.integration.pipelines.conftest import write
from tests.integration.team.quality_engine import call, ok, open_engine, refused
from tests.support.scripted import execute

BRANCHY = {
    "pkg/sign.py": "def sign(x: int) -> int:\n    if x < 0:\n        return -1\n    return 1\n",
    "tests/test_sign.py": "from pkg.sign import sign\n\n\ndef test_positive() -> None:\n"
    "    assert sign(3) == 1\n",
}
# Two tests that fail at the same line of a helper, and one that fails on its own.
SHARED_SITE = {
    "pkg/parse.py": "def parse(text: str) -> int:\n    return int(text)\n",
    "tests/test_parse.py": (
        "from pkg.parse import parse\n\n\n"
        "def test_letters() -> None:\n    assert parse('abc') == 0\n\n\n"
        "def test_empty() -> None:\n    assert parse('') == 0\n\n\n"
        "def test_sum() -> None:\n    assert parse('2') + 1 == 4\n"
    ),
}


@pytest.fixture
async def engine(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Engine]:
    async for eng in open_engine(data_dir, workspace, monkeypatch):
        yield eng


def _pytest_output(workspace: Path, *targets: str) -> str:
    """What a developer pastes: pytest's terminal report, from a real run."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *targets],
        cwd=workspace, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    return run.stdout


async def test_a_test_plan_names_the_tests_the_untested_files_and_the_command(
    engine: Engine,
) -> None:
    out = await call(engine, "tester", "tester.plan.create",
                     paths=["pkg/calc.py", "pkg/halves.py"])  # fmt: skip
    assert out.ok, out.error
    plan = out.result
    assert plan["framework"] == "pytest" and plan["tests"] == ["tests/test_calc.py"]
    assert plan["untested"] == ["pkg/halves.py"]
    assert plan["command"].endswith("pytest -q tests/test_calc.py") and plan["installed"]
    assert [g.op for g in out.guidance] == ["tester.tests.run"]
    assert out.guidance[0].args["paths"] == ["tests/test_calc.py"]


async def test_plan_refuses_paths_outside_the_workspace_and_missing_files(
    engine: Engine,
) -> None:
    code, message, _ = await refused(engine, "tester", "tester.plan.create", paths=["../x.py"])
    assert code == "VALIDATION_ERROR" and "outside the workspace" in message
    code, message, details = await refused(engine, "tester", "tester.plan.create",
                                           paths=["pkg/nope.py"])  # fmt: skip
    assert code == "NOT_FOUND" and details["reason"] == "no_such_file" and "nope" in message
    code, _, details = await refused(engine, "tester", "tester.plan.create", task_id="t7")
    assert code == "NOT_FOUND" and details["reason"] == "unknown_task"


async def test_pytest_output_becomes_failures_with_expected_and_actual(
    engine: Engine, workspace: Path
) -> None:
    output = _pytest_output(workspace, "tests/test_calc.py")
    found = await ok(engine, "tester", "tester.failures.analyze", output=output)
    assert found["format"] == "pytest" and found["failed"] == 1 and found["passed"] == 1
    (failure,) = found["failures"]
    assert failure["name"] == "tests/test_calc.py::test_add_bad"
    assert (failure["file"], failure["line"]) == ("tests/test_calc.py", 9)
    assert (failure["expected"], failure["actual"]) == ("5", "4")


async def test_failures_at_one_site_are_grouped_as_one_likely_cause(
    engine: Engine, workspace: Path
) -> None:
    write(workspace, SHARED_SITE)
    output = _pytest_output(workspace, "tests/test_parse.py")
    found = await ok(engine, "tester", "tester.failures.analyze", output=output)
    assert found["failed"] == 3
    first, second = found["causes"]
    assert first["group"] == "same_site" and first["site"] == "pkg/parse.py:2"
    assert first["error_type"] == "ValueError"
    assert sorted(first["tests"]) == [
        "tests/test_parse.py::test_empty", "tests/test_parse.py::test_letters"
    ]  # fmt: skip
    assert second["group"] == "single" and second["tests"] == ["tests/test_parse.py::test_sum"]


GO_TEXT = """\
=== RUN   TestAdd
    calc_test.go:12: got 4, want 5
--- FAIL: TestAdd (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
"""
JEST_TEXT = """\
FAIL src/sum.test.js
  ● sum › adds numbers

    expect(received).toBe(expected) // Object.is equality

    Expected: 5
    Received: 4

      at Object.<anonymous> (src/sum.test.js:4:17)
"""


async def test_go_and_jest_reports_are_sniffed_too(engine: Engine) -> None:
    go = await ok(engine, "tester", "tester.failures.analyze", output=GO_TEXT)
    assert go["format"] == "go test"
    (failure,) = go["failures"]
    assert (failure["name"], failure["file"], failure["line"]) == ("TestAdd", "calc_test.go", 12)
    assert (failure["expected"], failure["actual"]) == ("5", "4")
    jest = await ok(engine, "tester", "tester.failures.analyze", output=JEST_TEXT)
    assert jest["format"] == "jest/vitest"
    (failure,) = jest["failures"]
    assert (failure["file"], failure["line"]) == ("src/sum.test.js", 4)
    assert (failure["expected"], failure["actual"]) == ("5", "4")
    plain = await ok(engine, "tester", "tester.failures.analyze", output="all good here")
    assert plain["format"] == "unrecognised" and plain["failures"] == []


async def test_results_report_shows_the_latest_run(engine: Engine) -> None:
    before = await ok(engine, "tester", "tester.results.report")
    assert before["ran"] is False
    run = await call(engine, "tester", "tester.tests.run", dry_run=False,
                     command=f"{sys.executable} -m pytest -p no:cacheprovider",
                     paths=["tests/test_calc.py"])  # fmt: skip
    assert run.ok, run.error
    report = await ok(engine, "tester", "tester.results.report")
    assert report["ran"] is True and report["op"] == "tester.tests.run"
    assert report["failed"] == 1 and report["passed"] == 1 and report["passed_run"] is False
    (failure,) = report["failures"]
    assert failure["name"] == "tests/test_calc.py::test_add_bad"
    assert (failure["expected"], failure["actual"]) == ("5", "4")


async def test_coverage_names_the_uncovered_lines(engine: Engine, workspace: Path) -> None:
    write(workspace, BRANCHY)
    report = await ok(engine, "tester", "tester.coverage.analyze", paths=["pkg/sign.py"])
    (sign,) = report["files"]
    assert sign["file"] == "pkg/sign.py" and sign["uncovered_lines"] == ["3"]
    assert 0 < sign["percent"] < 100
    assert report["tests"]["failed"] == 1  # the fixture's failing test ran too
    assert not [p for p in os.listdir(workspace) if p.startswith(".coverage")]  # in its temp
    latest = await ok(engine, "tester", "tester.results.report")
    assert latest["op"] == "tester.coverage.analyze"


async def test_coverage_without_coverage_installed_says_what_to_install(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, message, details = await refused(engine, "tester", "tester.coverage.analyze")
    assert code == "NOT_FOUND" and details["reason"] == "coverage_not_found"
    assert message.startswith("coverage tool not found")


async def test_a_workspace_coverage_binary_waits_for_approval(
    engine: Engine, workspace: Path
) -> None:
    trap = workspace / ".venv" / "bin" / "coverage"
    trap.parent.mkdir(parents=True)
    trap.write_text(f"#!/bin/sh\ntouch {workspace / 'PWNED'}\n")
    trap.chmod(0o755)
    out = await call(engine, "tester", "tester.coverage.analyze", mode=None)
    assert not out.ok and out.error is not None
    assert out.error.details["reason"] == "approval_required"
    assert not (workspace / "PWNED").exists()


async def test_generating_tests_offline_is_a_typed_model_needed(engine: Engine) -> None:
    code, message, details = await refused(engine, "tester", "tester.code.generate",
                                           paths=["pkg/halves.py"])  # fmt: skip
    assert code == "CONFLICT" and details["reason"] == "model_needed"
    assert "needs a model" in message


HALVES_TEST = "from pkg.halves import half\n\n\ndef test_half() -> None:\n    assert half(4) == 2\n"


async def test_with_a_model_the_engineer_writes_tests_and_they_run(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns: list[dict[str, Any]] = [
        {"expect": "pytest tests for", "text": "Writing.", "tool_calls": [
            execute("engineer.file.write", path="tests/test_halves.py", content=HALVES_TEST)]},
        {"text": "Wrote tests/test_halves.py."},
    ]  # fmt: skip
    async for engine in open_engine(data_dir, workspace, monkeypatch, turns):
        made = await ok(engine, "tester", "tester.code.generate", paths=["pkg/halves.py"])
        assert made["written"] == ["tests/test_halves.py"]
        assert (workspace / "tests/test_halves.py").read_text() == HALVES_TEST
        assert made["run"]["status"] == "passed" and made["run"]["passed"] == 1
        latest = await ok(engine, "tester", "tester.results.report")
        assert latest["op"] == "tester.code.generate"
