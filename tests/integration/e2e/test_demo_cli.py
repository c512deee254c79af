"""The demo as a newcomer runs it: ``sylk run --script examples/verbose-flag.yaml
"add a --verbose flag to the CLI"`` in a copy of the example project, a real process.

With ``--yes`` the plan is approved and runs: stderr shows the progression in order
(proposed, approved, each task, e1's three loops and why each looped, the session's QA,
the phase moves up to complete), the changes land once, stdout ends with the
Architect's summary and the run exits 0. Without ``--yes`` and no terminal the plan
waits, nothing changes, the run exits non-zero saying how to approve, and that command
runs the plan; at a terminal the run asks, and a "y" runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.e2e.flow import (
    CLI_AFTER,
    EXAMPLE,
    PLAN_ID,
    REPO_ROOT,
    REQUEST,
    SCRIPT,
    assert_changed_once,
    example_repo,
    tools_path,
    work_tree,
)

HANG = 120.0  # a hang guard only
EXIT_PLAN_INCOMPLETE = 5


def sylk(
    repo: Path, data_dir: Path, *args: str, stdin: int = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYLK_", "ANTHROPIC_",
                                                                   "OPENAI_"))}  # fmt: skip
    env |= {"PATH": tools_path(), "PYTHONPATH": str(REPO_ROOT), "SYLK_DATA_DIR": str(data_dir),
            "SYLK_CONFIG_DIR": str(data_dir.parent / "config")}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui.cli", "run", "--script", str(SCRIPT), *args],
        cwd=repo, env=env, stdin=stdin, capture_output=True, text=True,
        timeout=HANG, check=False,
    )  # fmt: skip


def progress(stderr: str) -> list[str]:
    return [line.removeprefix("▸ ") for line in stderr.splitlines() if line.startswith("▸ ")]


def in_order(lines: list[str], *wanted: str) -> None:
    """Each of ``wanted`` starts some line, in this order."""
    at = 0
    for fragment in wanted:
        found = next((i for i in range(at, len(lines)) if lines[i].startswith(fragment)), None)
        assert found is not None, f"{fragment!r} not after line {at}: {lines}"
        at = found + 1


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return example_repo(tmp_path)


def test_the_demo_runs_the_plan_and_prints_its_progression(repo: Path, tmp_path: Path) -> None:
    done = sylk(repo, tmp_path / "data", "--yes", REQUEST)
    lines = progress(done.stderr)
    task = f"Plan {PLAN_ID}, task"
    in_order(
        lines,
        f"plan {PLAN_ID} v1: proposed, awaiting approval",
        f"plan {PLAN_ID} v1: approved",
        "phase: planning -> execution",
        f"Plan {PLAN_ID}: ✓ t1 (librarian) passed",
        f"{task} e1: running (loop 1)",
        f"{task} e1: inspecting (loop 1)",
        f"{task} e1: running (loop 2)",
        f"{task} e1: testing (loop 2)",
        f"{task} e1: running (loop 3)",
        f"{task} e1: completed (loop 3)",
        f"Plan {PLAN_ID}: ✓ e1 (engineer) passed",
        f"Plan {PLAN_ID}: every task passed (3 passed)",
        "phase: execution -> inspection",
    )
    assert f"{task} e2: completed (loop 1)" in lines
    why = {line.split(": ", 2)[1]: line.split(": ", 2)[2] for line in lines
           if line.startswith(f"{task} e1: running")}  # fmt: skip
    assert why == {
        "running (loop 1)": "engineer turn 1",
        "running (loop 2)": "the inspection failed: greet/cli.py:4: F401 `os` imported but unused",
        "running (loop 3)": "the tests failed: tests/test_cli.py:8: test_says_hello: "
        "AssertionError: assert 'Hello, ada!\\n' == 'hello, ada\\n' (and 1 more)",
    }
    assert_changed_once(work_tree(repo, tmp_path / "data"))
    assert lines[-6:] == [
        "phase: execution -> inspection (plan verbose-flag: every task passed; its work goes "
        "to inspection)",
        "Session QA after plan verbose-flag: inspecting the 2 file(s) this session changed",
        "phase: inspection -> testing (plan verbose-flag: inspection passed)",
        "Session QA: running the whole test suite",
        "phase: testing -> complete (plan verbose-flag: session QA passed)",
        "the plan completed",
    ]
    assert done.returncode == 0, done.stderr
    # stdout: the Architect's answer, then its summary; the tasks' turns show as progress.
    assert done.stdout.startswith("I'll plan it:"), done.stdout
    assert done.stdout.rstrip().endswith("Validation: inspection clean (2 changed file(s))")
    assert "Tests: 2 passed, 0 failed (pytest)" in done.stdout
    assert "Reading greet/cli.py" not in done.stdout


def test_without_yes_the_plan_waits_and_the_run_says_how_to_approve_it(
    repo: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    done = sylk(repo, data, REQUEST)
    assert done.returncode == EXIT_PLAN_INCOMPLETE, done.stderr
    lines = progress(done.stderr)
    assert lines[0] == f"plan {PLAN_ID} v1: proposed, awaiting approval"
    approve = f"--yes '/plan approve {PLAN_ID}'"
    assert lines[-1].startswith(f"plan {PLAN_ID} waits for your approval: approve it with ")
    assert f"sylk run --session 'session 1' --script {SCRIPT} {approve}" in lines[-1]
    assert (repo / "greet" / "cli.py").read_text() == (EXAMPLE / "greet" / "cli.py").read_text()

    then = sylk(repo, data, "--session", "session 1", "--yes", f"/plan approve {PLAN_ID}")
    assert then.stdout.startswith(f"approved plan {PLAN_ID} (version 1)\n"), then.stderr
    assert f"Plan {PLAN_ID} is complete." in then.stdout
    assert f"Plan {PLAN_ID}: every task passed (3 passed); next: inspection" in progress(
        then.stderr
    )
    assert then.returncode == 0, then.stderr
    assert (work_tree(repo, data) / "greet" / "cli.py").read_text() == CLI_AFTER


def at_a_terminal(repo: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The demo with stdin a terminal on which "y" was typed ahead."""
    reader, writer = os.openpty()
    try:
        os.write(writer, b"y\n")
        return sylk(repo, data, *args, REQUEST, stdin=reader)
    finally:
        os.close(reader)
        os.close(writer)


def test_at_a_terminal_without_yes_the_run_asks_and_a_yes_runs_the_plan(
    repo: Path, tmp_path: Path
) -> None:
    # Edits follow the approval mode, not the plan's approval: allowed here.
    done = at_a_terminal(repo, tmp_path / "data", "--approval", "auto-edit")
    assert f"Approve plan {PLAN_ID} and run it? [y/N] " in done.stderr
    lines = progress(done.stderr)
    in_order(lines, f"plan {PLAN_ID} v1: proposed, awaiting approval",
             f"plan {PLAN_ID} v1: approved", f"Plan {PLAN_ID}: every task passed")  # fmt: skip
    assert not any("waits for your approval" in line for line in lines)
    assert lines[-1] == "the plan completed" and done.returncode == 0, done.stderr
    assert_changed_once(work_tree(repo, tmp_path / "data"))


def test_a_plan_whose_edits_are_refused_fails_and_does_not_exit_0(
    repo: Path, tmp_path: Path
) -> None:
    done = at_a_terminal(repo, tmp_path / "data")  # the plan approved, its edits asked
    # e1 and e2 run at once: whichever is refused first fails the plan (fail_fast)
    assert "sylk: refused to edit " in done.stderr
    assert "it needs the user's approval" in done.stderr
    last = progress(done.stderr)[-1]  # a task whose edits were refused fails, not passes
    assert last.startswith("the plan did not complete: its DAG failed ("), last
    assert "were not approved (approval mode ask, no one to answer)" in last
    assert done.returncode == EXIT_PLAN_INCOMPLETE
    assert (repo / "greet" / "cli.py").read_text() == (EXAMPLE / "greet" / "cli.py").read_text()
