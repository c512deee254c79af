"""The demo through `sylk repl` fed by a pipe: the Architect's plan is reviewed inline
("a" approves it), its DAG runs while the repl goes on, and the end of input waits for
the DAG and the session's QA instead of stopping them: the changes land once (in the
session's worktree)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.e2e.flow import (
    PLAN_ID,
    REPO_ROOT,
    REQUEST,
    SCRIPT,
    assert_changed_once,
    example_repo,
    tools_path,
    work_tree,
)
from tests.integration.repl.repl_process import piped


def test_a_plan_approved_inline_runs_to_complete_before_the_repl_leaves(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = example_repo(tmp_path)
    env = {"SYLK_SCRIPT": str(SCRIPT), "SYLK_PROVIDER": "scripted", "PATH": tools_path(),
           "PYTHONPATH": str(REPO_ROOT)}  # fmt: skip
    result = piped(f"/approval auto-edit\n{REQUEST}\na\n", data_dir, repo, **env)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert f"? Approve plan {PLAN_ID}?" in out
    assert "approve / modify / ask why / later [a/m/w/l] a" in out
    assert f"▸ plan {PLAN_ID} v1: approved" in out
    assert f"▸ waiting for plan {PLAN_ID} to finish (ctrl+c leaves now)" in out
    assert out[-1].startswith("▸ phase: testing -> complete")
    assert all(line.startswith("▸ ") for line in out if "▸" in line)  # never after an answer
    assert "Traceback" not in result.stderr
    assert_changed_once(work_tree(repo, data_dir))  # the session's worktree: repo untouched
