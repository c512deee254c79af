"""An approved plan's engineer nodes run on a real local Ray head (127.0.0.1, two CPUs):
each worker clones the session's repository at a base ref, runs the whole pipeline in an
engine of its own, pushes its result, and the driver applies it to the session's files
exactly once. Hooks planted in the session's repository never run; a worker SIGKILLed
mid-pipeline is retried and its edit lands once. The worker keeps the driver's rules: a
deny rule refuses there, its sandbox confines commands to its own checkout, and in ask
mode its approvals are asked in the driver's QuestionBoard and answered from there. One
Ray head for the test session (conftest)."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest

from backend.events import EngineEvent, QuestionAsked
from backend.orchestration import DagStatus
from tests.integration.cluster.ray_runs import RayRun, appends, git, refs, script
from tests.support.scripted import execute, read_then_edit

ray = pytest.importorskip("ray")
# One head for the session: with `--dist loadgroup` xdist keeps these on one worker too.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]


async def test_two_engineer_nodes_run_on_ray_workers_and_land_once(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, repo: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, {
        "e1": appends("a.txt", "one\n", "from e1\n"), "e2": appends("b.txt", "two\n", "from e2\n"),
    })  # fmt: skip
    (repo / "untracked.txt").write_text("not committed\n")  # the base carries it too
    run = RayRun(data_dir, repo)
    try:
        sid = await run.approved()
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert (repo / "a.txt").read_text() == "one\nfrom e1\n"
        assert (repo / "b.txt").read_text() == "two\nfrom e2\n"
        assert str(outcome.outputs["e1"]).endswith("Appended to a.txt.")
        for task in ("e1", "e2"):
            said = run.notices(task)
            assert said[0].startswith("on ray worker "), said
            assert any(n.startswith("completed (loop 1) on ray worker") for n in said), said
        assert refs(repo, "refs/sylk/results/p1/") == [
            "refs/sylk/results/p1/e1/1", "refs/sylk/results/p1/e2/1"]  # fmt: skip
        assert len(refs(repo, "refs/sylk/applied/")) == 2
        assert git(repo, "status", "--porcelain") == " M a.txt\n M b.txt\n?? untracked.txt\n"
        assert git(repo, "log", "--oneline").count("\n") == 1  # the user's HEAD never moved
        assert not (tmp_path / "hooks-ran").exists()
        agents = {r["agent"] for r in run.parts.archive.usage_by_agent(sid)}
        assert "engineer" in agents  # the workers' model calls, in the driver's archive
    finally:
        await run.engine.aclose()


async def test_a_worker_killed_mid_pipeline_is_retried_and_its_edit_lands_once(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, repo: Path
) -> None:
    slow = appends("a.txt", "one\n", "from e1\n")
    slow[1] = {**slow[1], "pause_s": 4}  # after the read, before the edit: time to kill it
    script(tmp_path / "s.json", monkeypatch, {
        "e1": slow, "e2": appends("b.txt", "two\n", "from e2\n"),
    })  # fmt: skip
    run = RayRun(data_dir, repo)
    try:
        sid = await run.approved()
        pid = await run.worker_pid("e1")  # its pipeline runs; the edit waits on the pause
        os.kill(pid, signal.SIGKILL)
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert (repo / "a.txt").read_text() == "one\nfrom e1\n"  # once, not twice
        assert (repo / "b.txt").read_text() == "two\nfrom e2\n"
        attempts = [e for e in run.events if getattr(e, "node_id", None) == "e1"
                    and getattr(e, "status", None) == "running"]  # fmt: skip
        assert len(attempts) >= 2
        results = refs(repo, "refs/sylk/results/p1/e1/")
        assert "refs/sylk/results/p1/e1/1" not in results  # the dead attempt pushed nothing
        assert results == ["refs/sylk/results/p1/e1/2"]
        # The dead attempt's history died with it; the retry's is stored once.
        finals = [r for r in run.parts.archive.load_steps(sid)
                  if r["role"] == "engineer" and r["kind"] == "final"]  # fmt: skip
        assert len(finals) == 2, finals
        # The retry swept what the killed worker left (its checkout, its data dir).
        assert scratch_of(pid) == []
    finally:
        await run.engine.aclose()


def scratch_of(pid: int) -> list[Path]:
    """A worker process's scratch dirs (checkout, data dir) still on disk."""
    return list(Path(tempfile.gettempdir()).glob(f"sylk-ray-{pid}-*"))


def shell(command: str) -> dict[str, Any]:
    return execute("engineer.shell.run", command=command)


async def test_on_a_worker_the_sandbox_and_the_deny_rules_hold(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, repo: Path
) -> None:
    secret = data_dir / "secrets.toml"
    secret.write_text("token = 'driver-only'\n")
    home_mark = Path.home() / f".sylk-escape-{os.getpid()}"
    outside = [repo / "escaped.txt", home_mark, tmp_path / "escaped.txt"]
    writes = " ".join(f"{{ echo x > {p}; }} 2>/dev/null && w=$w+ || w=$w-;" for p in outside)
    probe = f'w=W; {writes} cat {secret} >/dev/null 2>&1 && r=R+ || r=R-; echo "$w/$r"'
    turns = [
        {"text": "Trying the walls.", "tool_calls": [shell(probe)]},
        {"expect": "W---/R-", "text": "Pushing.", "tool_calls": [shell("git push origin main")]},
        {"expect": "matches the deny rule 'git push*'", "text": "Confined and refused."},
    ]
    script(tmp_path / "s.json", monkeypatch, {"e1": turns, "e2": appends("b.txt", "two\n", "e2\n")})
    run = RayRun(data_dir, repo, deny=("git push*",))
    try:
        sid = await run.approved("auto")  # commands run unasked when the sandbox confines
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        # Each expect held, or the script had failed the node: every write outside the
        # worker's checkout and the driver's secrets refused; the deny rule applied there.
        assert str(outcome.outputs["e1"]).endswith("Confined and refused."), outcome
        assert not any(p.exists() for p in outside)
        assert (repo / "b.txt").read_text() == "two\ne2\n"
    finally:
        home_mark.unlink(missing_ok=True)
        await run.engine.aclose()


async def test_in_ask_mode_the_workers_approvals_are_answered_on_the_driver(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, repo: Path
) -> None:
    refused = [*read_then_edit("b.txt", "two\n", "two\ne2\n", said="")[:2],
               {"expect": "the user denied the request", "text": "Left b.txt alone."}]  # fmt: skip
    script(tmp_path / "s.json", monkeypatch, {"e1": appends("a.txt", "one\n", "e1\n"),
                                              "e2": refused})  # fmt: skip
    run = RayRun(data_dir, repo)
    board = run.parts.questions
    detach = board.attach()  # a front end (the TUI's inbox) answers on the driver
    asked: list[QuestionAsked] = []

    def answer(event: EngineEvent) -> None:
        if isinstance(event, QuestionAsked) and event.question.plan is not None:
            asyncio.get_running_loop().call_soon(board.answer, event.question_id, "approve")
        if isinstance(event, QuestionAsked) and event.question.approval is not None:
            asked.append(event)
            path = event.question.approval.path
            value = "allow" if path.endswith("a.txt") else "deny:not this one"
            asyncio.get_running_loop().call_soon(board.answer, event.question_id, value)

    run.engine.events.add_listener(answer)
    try:
        sid = await run.approved("ask")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert sorted(Path(q.question.approval.path).name for q in asked  # type: ignore[union-attr]
                      ) == ["a.txt", "b.txt"]  # fmt: skip
        assert {q.session_id for q in asked} == {sid}  # in the user's session, the inbox's
        assert (repo / "a.txt").read_text() == "one\ne1\n"  # allowed: edited, applied
        assert (repo / "b.txt").read_text() == "two\n"  # denied on the driver: untouched
        assert str(outcome.outputs["e2"]).endswith("Left b.txt alone.")
        assert board.pending() == []
    finally:
        detach()
        await run.engine.aclose()


async def test_an_isolated_session_lands_in_its_worktree_and_a_conflict_applies_nothing(
    ray_head: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, repo: Path
) -> None:
    slow = appends("a.txt", "one\n", "from e1\n")
    slow[1] = {**slow[1], "pause_s": 3}  # the user edits a.txt meanwhile
    script(tmp_path / "s.json", monkeypatch, {"e1": slow, "e2": appends("b.txt", "two\n", "e2\n")})
    run = RayRun(data_dir, repo, isolated=True)  # the session in a linked worktree
    try:
        sid = await run.approved()
        tree = Path(run.parts.sessions.get(sid).workspace)
        assert (tree / ".git").is_file() and tree != repo
        await run.worker_pid("e1")  # its base is taken: the user's edit comes after
        (tree / "a.txt").write_text("one, rewritten by the user\n")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.FAILED, outcome
        failed = outcome.records["e1"]
        assert "the worker's edits to a.txt conflict with the session's files" in str(failed.error)
        assert failed.attempts == 1  # the user's edit is theirs to weigh: never rerun over
        assert (tree / "a.txt").read_text() == "one, rewritten by the user\n"  # untouched
        assert (tree / "b.txt").read_text() == "two\ne2\n"  # e2 landed, in the worktree
        assert (repo / "b.txt").read_text() == "two\n"  # the main checkout is not the session's
    finally:
        await run.engine.aclose()
