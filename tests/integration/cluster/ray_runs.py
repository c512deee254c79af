"""What the Ray plan tests share: a driver engine on the cluster (or local, to compare),
a scripted two-engineer plan, git helpers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from backend.config.approvals import ApprovalSettings
from backend.config.orchestration import OrchestrationSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import EngineEvent, EngineNotice
from tests.integration.orchestration.plan_runs import architect_proposes, node, plan
from tests.integration.plans.conftest import say
from tests.support.polling import until
from tests.support.scripted import read_then_edit

HOOKS = ("pre-receive", "update", "post-receive", "post-update", "post-checkout",
         "reference-transaction", "pre-commit", "pre-push")  # fmt: skip


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True)  # fmt: skip
    return done.stdout


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
    """A driver engine with ``[orchestration] backend = "ray"`` (the head already up), or
    ``backend="local"``: the same plan run in process, to compare."""

    def __init__(
        self,
        data_dir: Path,
        workspace: Path,
        *,
        deny: tuple[str, ...] = (),
        isolated: bool = False,
        backend: str = "ray",
    ) -> None:
        base = load_config(None)
        sessions = base.sessions.model_copy(update={"git_isolation": isolated})
        settings = base.model_copy(update={
            "orchestration": OrchestrationSettings(backend=backend, address="auto"),
            "sessions": sessions, "approvals": ApprovalSettings(deny=list(deny)),
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

    async def worker_pid(self, task: str) -> int:
        """The pid of the worker running ``task``, once its pipeline started there (the
        worker names itself first, then the engineer's first turn is announced)."""

        def started() -> bool:
            return any(n.startswith("running (loop 1)") for n in self.notices(task))

        await until(started, what=f"task {task} running on a worker")
        found = [n for n in self.notices(task) if n.startswith("on ray worker")]
        return int(found[0].rsplit("pid ", 1)[1].rstrip(")"))

    async def approved(self, mode: str = "auto-edit") -> str:
        session = await self.engine.ensure_session()
        await self.engine.approval_command(session.id, mode)
        await say(self.engine, session.id, "@architect add a --verbose flag")
        await say(self.engine, session.id, "/plan approve p1")
        return session.id


def refs(repo: Path, prefix: str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()
