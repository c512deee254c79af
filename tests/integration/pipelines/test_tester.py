"""The Tester's run on a real project with real pytest, in the sandbox."""

from __future__ import annotations

import pytest

from backend.pipelines.checks import CheckPathError, TestRunStatus, relevant_tests, run_tests
from tests.integration.pipelines.conftest import Project, write

TIMEOUT_S = 60.0


async def test_failures_carry_name_file_line_message_expected_actual(project: Project) -> None:
    targets = relevant_tests(project.root, ["pkg/calc.py"], "pytest")
    assert targets == ["tests/test_calc.py"]
    report = await run_tests(
        project.root,
        targets,
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert (report.framework, report.status) == ("pytest", TestRunStatus.FAILED)
    assert (report.passed, report.failed, report.errors, report.exit_code) == (1, 1, 0, 1)
    [failure] = report.failures
    assert failure.name == "tests/test_calc.py::test_add_bad"
    assert (failure.file, failure.line) == ("tests/test_calc.py", 9)
    assert failure.message.startswith("assert 4 == 5")
    assert (failure.expected, failure.actual) == ("5", "4")
    assert "test_add_bad FAILED" in report.output_tail
    assert report.level not in (None, "none")
    assert not list(project.root.rglob("*.xml"))  # the report never lands in the workspace


async def test_after_the_fix_the_run_passes(project: Project) -> None:
    project.fix()
    report = await run_tests(
        project.root,
        ["tests/test_calc.py::test_add_four"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert (report.status, report.passed, report.failed, report.failures) == (
        TestRunStatus.PASSED,
        1,
        0,
        [],
    )


async def test_a_hanging_test_is_killed_and_named(project: Project) -> None:
    write(
        project.root,
        {
            "tests/test_hang.py": (
                "import time\n\n\ndef test_quick() -> None:\n    pass\n\n\n"
                "def test_forever() -> None:\n    time.sleep(600)\n"
            )
        },
    )
    report = await run_tests(
        project.root,
        ["tests/test_hang.py"],
        project.discovered,
        project.confinement,
        8.0,
        path_env=project.path_env,
    )
    assert (report.status, report.exit_code) == (TestRunStatus.TIMED_OUT, None)
    [hung] = report.failures
    assert (hung.name, hung.kind) == ("tests/test_hang.py::test_forever", "timeout")
    assert "tests/test_hang.py::test_forever" in report.detail


async def test_a_collection_error_is_an_error_not_a_pass(project: Project) -> None:
    write(project.root, {"tests/test_broken.py": "from pkg.missing import nothing\n"})
    report = await run_tests(
        project.root,
        ["tests/test_broken.py"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert (report.status, report.errors) == (TestRunStatus.FAILED, 1)
    assert "ModuleNotFoundError" in report.failures[0].trace


async def test_a_missing_or_unknown_framework_is_not_run(project: Project) -> None:
    missing = await run_tests(
        project.root,
        None,
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=str(project.outside),
    )
    assert (missing.status, missing.detail) == (TestRunStatus.NOT_RUN, "pytest is not installed")
    none = await run_tests(project.root, None, [], project.confinement, TIMEOUT_S)
    assert none.status is TestRunStatus.NOT_RUN and "no test framework" in none.detail


async def test_no_targets_runs_nothing_and_a_target_outside_is_refused(project: Project) -> None:
    empty = await run_tests(project.root, [], project.discovered, project.confinement, TIMEOUT_S)
    assert empty.status is TestRunStatus.NO_TESTS and empty.argv == []
    with pytest.raises(CheckPathError):
        await run_tests(
            project.root,
            ["../outside/test_x.py::test_y"],
            project.discovered,
            project.confinement,
            TIMEOUT_S,
            path_env=project.path_env,
        )


async def test_an_option_shaped_target_is_a_path(project: Project) -> None:
    report = await run_tests(
        project.root,
        ["--co"],
        project.discovered,
        project.confinement,
        TIMEOUT_S,
        path_env=project.path_env,
    )
    assert "./--co" in report.argv
    assert report.status is not TestRunStatus.PASSED  # no such file: pytest says so, no listing
