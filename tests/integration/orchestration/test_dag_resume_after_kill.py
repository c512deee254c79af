"""A DAG killed with SIGKILL mid-run resumes from its SQLite state: nothing that passed runs twice.

A real child process (``dag_child.py``) runs a five-node DAG against a SQLite state
file; node ``c`` hangs, so the child is killed (``kill -9``) while ``c`` runs and after
``a`` and ``b`` passed. A second child runs the same plan on the same file: it must run
only ``c`` and what follows it, feeding ``c`` the output ``a`` saved before the kill.
Every node appends to a log file when it starts and ends; the test counts lines.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from pathlib import Path

from tests.support.child_process import ChildProcess

REPO_ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("dag_child.py")
HANG = 60.0  # a hang guard only; a healthy child answers in well under a second

PLAN = {
    "id": "resume-dag",
    "nodes": [
        {"id": "a", "agent": "librarian", "prompt": "look"},
        {"id": "b", "agent": "engineer", "prompt": "build b", "depends_on": ["a"]},
        {"id": "c", "agent": "engineer", "prompt": "build c", "depends_on": ["a"]},
        {"id": "d", "agent": "inspector", "prompt": "check", "depends_on": ["b", "c"]},
        {"id": "e", "agent": "tester", "prompt": "test", "depends_on": ["d"]},
    ],
    "policy": {"max_concurrency": 2},
}


class Child(ChildProcess):
    def __init__(self, tmp: Path, hang: str | None) -> None:
        args = [str(tmp / "plan.json"), str(tmp / "state.sqlite"), str(tmp / "nodes.log")]
        super().__init__(
            CHILD, [*args, *([hang] if hang else [])], cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stderr=tmp / f"child-{hang}.stderr", hang_s=HANG,
        )  # fmt: skip


def _log(tmp: Path) -> Counter[str]:
    lines = (tmp / "nodes.log").read_text().splitlines()
    return Counter(" ".join(line.split()[:2]) for line in lines)


def _saved(tmp: Path) -> dict[str, str]:
    with sqlite3.connect(tmp / "state.sqlite") as db:
        rows = db.execute("SELECT node_id, status FROM dag_nodes WHERE dag_id = 'resume-dag'")
        return dict(rows.fetchall())


def test_a_killed_dag_resumes_and_no_completed_node_runs_again(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))

    first = Child(tmp_path, hang="c")
    first.wait_for("event a passed", "event b passed", "hanging c")
    first.kill()
    assert _log(tmp_path) == Counter(
        {"start a": 1, "done a": 1, "start b": 1, "done b": 1, "start c": 1}
    )
    assert _saved(tmp_path) == {"a": "passed", "b": "passed", "c": "running"}

    second = Child(tmp_path, hang=None)
    second.wait_for("event e passed")
    assert second.proc.wait(timeout=HANG) == 0
    second.stderr.close()
    outcome = second.lines.get(timeout=HANG)
    assert outcome is not None and outcome.startswith("outcome passed ")
    assert json.loads(outcome.split(" ", 2)[2]) == {n: f"out-{n}" for n in "abcde"}

    log = _log(tmp_path)
    assert {n: log[f"done {n}"] for n in "abcde"} == dict.fromkeys("abcde", 1)
    assert {n: log[f"start {n}"] for n in "abcde"} == {"a": 1, "b": 1, "c": 2, "d": 1, "e": 1}
    done_c = next(
        x for x in (tmp_path / "nodes.log").read_text().splitlines() if x.startswith("done c")
    )
    assert done_c == "done c a=out-a"  # a's output came from the state file, not a re-run
    assert "event a passed" in second.seen and "event a running" not in second.seen
    assert _saved(tmp_path) == dict.fromkeys("abcde", "passed")
