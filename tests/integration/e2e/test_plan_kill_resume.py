"""The demo's plan, killed with SIGKILL in the middle, resumes in a new process: no task
that passed runs again and no edit lands twice.

A child process (``plan_child.py start``) runs the plan with a copy of the demo's
script in which e1's first loop also inserts a line into greet/__init__.py (an edit
whose old text survives in its new text: applied twice, the line would be there twice)
and its second engineer turn thinks for ten minutes: by then the librarian task and e2
have passed (e2's README edit is on disk) and e1's first loop wrote greet/cli.py, made
the insertion and failed ruff. The child is killed there (``kill -9``). A ``sylk run``
on the same data dir afterwards leaves the stopped plan alone (it never resumes DAGs).
A second child (``plan_child.py resume``) calls ``Engine.resume_dags()`` with the same
script, unpaused: e1's files are first put back as they were before its first turn
(said in the transcript), then only e1 runs, from its first loop again, the plan passes
and the session's QA completes it. Then the archive and the disk are read: t1 and e2
ran once (one model turn each, one attempt, one README edit), each change, the
insertion too, is on disk once, and the project's own ruff and pytest pass.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

from backend.agents.tool_actions import actions_from_payload
from backend.engine import Engine, EngineConfig
from tests.integration.e2e.flow import (
    CLI_AFTER,
    PLAN_ID,
    README_LINE,
    REPO_ROOT,
    SCRIPT,
    changed_files,
    example_repo,
    project_checks_pass,
    tools_path,
    work_tree,
)
from tests.support.child_process import ChildProcess
from tests.support.scripted import execute

CHILD = Path(__file__).with_name("plan_child.py")
HANG = 120.0  # a hang guard only
E1_LOOP_2 = 2  # e1's thread: loop 1 is turns 0-1, loop 2 starts at turn 2
INIT_BEFORE = '"""greet: says hello."""\n'
VERSION_LINE = '__version__ = "0.1"\n'
INIT_AFTER = INIT_BEFORE + "\n" + VERSION_LINE  # the insertion: its old text survives


class Child(ChildProcess):
    def __init__(self, mode: str, data: Path, repo: Path, script: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYLK_")}
        env |= {"PYTHONPATH": str(REPO_ROOT), "PATH": tools_path(), "SYLK_SCRIPT": str(script),
                "SYLK_CONFIG_DIR": str(data.parent / "config")}  # fmt: skip
        super().__init__(CHILD, [mode, str(data), str(repo)], cwd=REPO_ROOT, env=env,
                         stderr=data.parent / f"{mode}.stderr", hang_s=HANG)  # fmt: skip


def inserting_script(tmp: Path, *, stall: bool) -> Path:
    """The demo's script, e1's first loop also inserting a line into greet/__init__.py;
    ``stall``: its second loop thinks for ten minutes (killed there)."""
    script = yaml.safe_load(SCRIPT.read_text())
    turns = script["threads"]["e1"]["turns"]
    init = "greet/__init__.py"  # read first: an edit needs the file read in the turn
    turns[0]["tool_calls"] += [
        execute("engineer.file.read", path=init),
        execute("engineer.file.edit", path=init, old_content=INIT_BEFORE, new_content=INIT_AFTER),
    ]
    if stall:
        turns[E1_LOOP_2]["pause_s"] = 600
    path = tmp / ("stalled.json" if stall else "inserting.json")
    path.write_text(json.dumps(script))
    return path


def node_rows(data: Path) -> dict[str, tuple[str, int]]:
    with sqlite3.connect(data / "dags.db") as db:
        rows = db.execute("SELECT node_id, status, attempts FROM dag_nodes").fetchall()
    return {node: (status, attempts) for node, status, attempts in rows}


def sylk_run(data: Path, repo: Path, text: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYLK_")}
    env |= {"PYTHONPATH": str(REPO_ROOT), "SYLK_CONFIG_DIR": str(data.parent / "config")}
    argv = [sys.executable, "-m", "sylk_tui.cli", "--data-dir", str(data), "run", text]
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                          timeout=HANG, check=False, stdin=subprocess.DEVNULL)  # fmt: skip


async def edits_by_file(data: Path, repo: Path) -> tuple[Counter[tuple[str, str]], list[str]]:
    """Every successful edit or write the transcript records, by (op, file); and the
    notices of interrupted attempts rolled back."""
    engine = Engine(EngineConfig(data_dir=data, workspace=repo, watch_files=False))
    try:
        [session] = engine.list_sessions()
        found: Counter[tuple[str, str]] = Counter()
        rolled: list[str] = []
        for message in await engine.transcript(session.id):
            if "rollback" in message.payload:
                rolled.append(str(message.payload["text"]))
            for action in actions_from_payload(message.payload):
                if action.op.startswith("engineer.file.") and action.op != "engineer.file.read":
                    found[(action.op.rsplit(".", 1)[1], action.title)] += action.status == "ok"
        return found, rolled
    finally:
        await engine.aclose()


async def test_a_plan_killed_mid_pipeline_resumes_without_running_or_editing_twice(
    tmp_path: Path,
) -> None:
    repo, data = example_repo(tmp_path), tmp_path / "data"
    data.mkdir()

    first = Child("start", data, repo, inserting_script(tmp_path, stall=True))
    first.wait_for("node t1 passed", "node e2 passed", "task e1 running 2")
    first.kill()
    assert node_rows(data) == {"t1": ("passed", 1), "e2": ("passed", 1), "e1": ("running", 1)}
    tree = work_tree(repo, data)  # the session's own worktree (backend.worktrees)
    half_done = (tree / "greet" / "cli.py").read_text()
    assert "import os\n" in half_done  # e1's first loop wrote; its fix never came
    assert (tree / "README.md").read_text().count(README_LINE) == 1
    assert (tree / "greet" / "__init__.py").read_text() == INIT_AFTER  # inserted, then killed

    bystander = sylk_run(data, repo, "/plan")
    assert bystander.returncode == 0, bystander.stderr
    assert node_rows(data)["e1"] == ("running", 1)  # sylk run resumed nothing
    assert (tree / "greet" / "cli.py").read_text() == half_done

    second = Child("resume", data, repo, inserting_script(tmp_path, stall=False))
    second.finish()
    assert f"resumed {PLAN_ID}" in second.seen and "outcome passed" in second.seen
    assert second.seen[-1] == "phase complete"  # the session's QA ran after the resume
    ran = [line for line in second.seen if line.startswith(("node ", "model ", "task "))]
    assert not [line for line in ran if line.startswith(("node t1", "node e2"))
                and not line.endswith("resumed")]  # fmt: skip
    assert "model librarian" not in ran and not any(x.startswith("task e2") for x in ran)
    assert ran.count("model engineer") == 6  # e1's three loops, two model calls each
    assert [x for x in ran if x.startswith("task e1")][-1] == "task e1 completed 3"
    assert node_rows(data) == {"t1": ("passed", 1), "e2": ("passed", 1), "e1": ("passed", 1)}

    assert (tree / "greet" / "__init__.py").read_text() == INIT_AFTER  # once, not twice
    assert (tree / "greet" / "cli.py").read_text() == CLI_AFTER
    assert (tree / "README.md").read_text().count(README_LINE) == 1
    assert changed_files(tree) == ["README.md", "greet/__init__.py", "greet/cli.py"]
    project_checks_pass(tree)
    edits, rolled = await edits_by_file(data, repo)
    assert edits == Counter({
        ("edit", "README.md"): 1,  # e2 ran once, before the kill
        ("write", "greet/cli.py"): 2,  # e1's first loop, before the kill and again after
        ("edit", "greet/__init__.py"): 2,  # the insertion, likewise: rolled back between
        ("edit", "greet/cli.py"): 2,  # its second and third loops, after the resume
    })  # fmt: skip
    assert rolled == [
        f"Plan {PLAN_ID}, task e1: its interrupted attempt's changes were rolled back before "
        "it runs again: restored greet/__init__.py, greet/cli.py"
    ]
