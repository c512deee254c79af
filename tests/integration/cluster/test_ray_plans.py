"""An approved plan's engineer nodes run on a real local Ray head (127.0.0.1, two CPUs):
each worker clones the session's repository at a base ref, runs the whole pipeline in an
engine of its own, pushes its result, and the driver applies it to the session's files
exactly once. Hooks planted in the session's repository never run; a worker SIGKILLed
mid-pipeline is retried and its edit lands once. One Ray head for the module: it is the
slowest thing these tests start."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.orchestration import OrchestrationSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import EngineEvent, EngineNotice
from backend.orchestration import DagStatus
from tests.integration.orchestration.plan_runs import architect_proposes, node, plan
from tests.integration.plans.conftest import say
from tests.support.scripted import read_then_edit

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow
HOOKS = ("pre-receive", "update", "post-receive", "post-update", "post-checkout",
         "reference-transaction", "pre-commit", "pre-push")  # fmt: skip


@pytest.fixture(scope="module")
def ray_head() -> Iterator[None]:
    """A local head on loopback, no dashboard, its sockets under a short temp path."""
    with tempfile.TemporaryDirectory(prefix="r", dir="/tmp") as temp:
        os.environ["SYLK_SEMANTIC"] = "off"  # the workers' engines inherit the head's env
        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
                 _temp_dir=temp, log_to_driver=False)  # fmt: skip
        try:
            yield
        finally:
            ray.shutdown()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True)  # fmt: skip
    return done.stdout


@pytest.fixture
def repo(workspace: Path, tmp_path: Path) -> Path:
    """The session's repository: two files committed, hooks planted that would leave a mark."""
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_text("one\n")
    (workspace / "b.txt").write_text("two\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "start")
    for hook in HOOKS:
        path = workspace / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {tmp_path / 'hooks-ran'}\n")
        path.chmod(0o755)
    return workspace


def appends(path: str, old: str, line: str) -> list[dict[str, Any]]:
    """An edit that visibly doubles if applied twice: a line appended."""
    return read_then_edit(path, old, old + line, said=f"Appended to {path}.")


def script(path: Path, monkeypatch: pytest.MonkeyPatch, threads: dict[str, Any]) -> None:
    doc = {
        "turns": architect_proposes(plan(node("e1", "engineer", retry={"max": 3, "backoff_ms": 0}),
                                         node("e2", "engineer"))),
        "threads": {name: {"match": f"Task {name} of plan", "turns": turns}
                    for name, turns in threads.items()},
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))


class RayRun:
    """A driver engine with ``[orchestration] backend = "ray"`` (the head already up)."""

    def __init__(self, data_dir: Path, workspace: Path) -> None:
        base = load_config(None)
        sessions = base.sessions.model_copy(update={"git_isolation": False})
        settings = base.model_copy(update={
            "orchestration": OrchestrationSettings(backend="ray", address="auto"),
            "sessions": sessions,
        })  # fmt: skip
        config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                              watch_files=False, run_approved_plans=True)  # fmt: skip
        self.parts = build(config, settings)
        self.engine = Engine.from_parts(self.parts)
        self.events: list[EngineEvent] = []
        self.engine.events.add_listener(self.events.append)

    def notices(self, task: str) -> list[str]:
        prefix = f"Plan p1, task {task}: "
        return [e.text.removeprefix(prefix) for e in self.events
                if isinstance(e, EngineNotice) and e.text.startswith(prefix)]  # fmt: skip

    async def approved(self) -> str:
        session = await self.engine.ensure_session()
        await self.engine.approval_command(session.id, "auto-edit")
        await say(self.engine, session.id, "@architect add a --verbose flag")
        await say(self.engine, session.id, "/plan approve p1")
        return session.id


def refs(repo: Path, prefix: str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()


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
        pid = 0
        for _ in range(600):
            found = [n for n in run.notices("e1") if n.startswith("on ray worker")]
            if found:
                pid = int(found[0].rsplit("pid ", 1)[1].rstrip(")"))
                break
            await asyncio.sleep(0.05)
        assert pid
        await asyncio.sleep(1.5)  # into the pause: the read done, the edit not yet
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
    finally:
        await run.engine.aclose()
