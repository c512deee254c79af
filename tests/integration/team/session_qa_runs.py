"""What the session QA tests share: a real Python project checked by Sylk's own ruff and
pytest, an engine on the scripted model that runs approved plans, and the turns.

The project: ``pkg/calc.py`` (add), ``pkg/report.py`` (uses add), a test of each. A
plan's engineer changes the project; its pipeline checks only the files its turns
edited and the tests named after them, so what QA finds after the DAG is what the
pipelines could not see: a file a shell command wrote, a test of another module.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.engine.team_work import session_qa
from backend.events import EngineEvent, SessionPhaseChanged
from backend.messages import MessageType
from backend.skills.builtin.catalog import agent_context
from backend.team.qa_checks import QaRecord
from tests.integration.pipelines.conftest import VENV_BIN, write
from tests.support.scripted import execute, read_then_edit

PYPROJECT = """\
[project]
name = "fx"
version = "0"

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
pythonpath = ["."]
"""
START = {
    ".gitignore": "__pycache__/\n",
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "pkg/report.py": (
        "from pkg.calc import add\n\n\ndef total(xs: list[int]) -> int:\n"
        "    t = 0\n    for x in xs:\n        t = add(t, x)\n    return t\n"
    ),
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\ndef test_add() -> None:\n    assert add(1, 2) == 3\n"
    ),
    "tests/test_report.py": (
        "from pkg.report import total\n\n\n"
        "def test_total() -> None:\n    assert total([1, 2, 3]) == 6\n"
    ),
}
FLAGS = "VERBOSE = False\n"
FLAGS_TEST = (
    "from pkg.flags import VERBOSE\n\n\ndef test_quiet() -> None:\n    assert VERBOSE is False\n"
)
ENGINEER_CONFIG = '[agents.engineer]\nprovider = "scripted"\nmodel = "scripted"\n'


def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([VENV_BIN, os.environ.get("PATH", "")]))
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    write(workspace, START)


def plan(*nodes: dict[str, Any], plan_id: str = "p1") -> dict[str, Any]:
    return {"id": plan_id, "prompt": "add a --verbose flag", "nodes": list(nodes)}


def node(node_id: str, prompt: str = "", *deps: str) -> dict[str, Any]:
    return {"id": node_id, "agent": "engineer", "prompt": prompt or f"do {node_id}",
            "depends_on": list(deps)}  # fmt: skip


def architect_proposes(document: dict[str, Any], expect: str = "") -> list[dict[str, Any]]:
    first: dict[str, Any] = {"tool_calls": [execute("architect.plan.create", plan=document)]}
    if expect:
        first["expect"] = expect
    return [first, {"text": f"Proposed plan {document['id']}."}]


def engineer_writes(
    files: dict[str, str], *, shell: str = "", expect: str = "", read: tuple[str, ...] = ()
) -> list[Any]:
    """One engineer turn: write ``files`` (and run ``shell``), then say so; files that
    exist are ``read`` in a turn before (edits need a fresh read)."""
    reads = [execute("engineer.file.read", path=p) for p in read]
    calls = [execute("engineer.file.write", path=p, content=c) for p, c in files.items()]
    if shell:
        calls.append(execute("engineer.shell.run", command=shell))
    first: dict[str, Any] = {"text": "Working.", "tool_calls": calls}
    turns = [{"text": "Reading.", "tool_calls": reads}, first] if reads else [first]
    if expect:
        turns[0]["expect"] = expect
    return [*turns, {"text": "Done: " + ", ".join(files)}]


def engineer_fixes(path: str, old: str, new: str, expect: str) -> list[dict[str, Any]]:
    turns = read_then_edit(path, old, new, said=f"Fixed {path}.")
    turns[0]["expect"] = expect
    return turns


class QaRun:
    """An engine on ``workspace`` (the project written there) running approved plans."""

    def __init__(
        self,
        data_dir: Path,
        workspace: Path,
        monkeypatch: pytest.MonkeyPatch,
        turns: list[dict[str, Any]],
        *,
        offline_architect: bool = False,
        **config: Any,
    ) -> None:
        project(workspace, monkeypatch)
        script = data_dir.parent / "script.json"
        script.write_text(json.dumps({"turns": turns}))
        monkeypatch.setenv("SYLK_SCRIPT", str(script))
        if offline_architect:  # only the engineer has a model: QA writes fix plans itself
            config_file = data_dir.parent / "sylk.toml"
            config_file.write_text(ENGINEER_CONFIG)
            config["config_file"] = config_file
        else:
            config["provider"] = "scripted"
        self.parts: EngineParts = build(
            EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False, **config)
        )
        self.engine = Engine.from_parts(self.parts)
        self.events: list[EngineEvent] = []
        self.engine.events.add_listener(self.events.append)
        self.workspace = workspace

    async def session(self, mode: str = "auto") -> str:
        session = await self.engine.ensure_session()
        await self.engine.approval_command(session.id, mode)
        return session.id

    async def submit_plan(self, session_id: str, document: dict[str, Any]) -> dict[str, Any]:
        """The plan submitted as an MCP client would (no model writes it)."""
        gateway = await self.engine.tools_gateway()
        ctx = agent_context("architect", session_id, self.workspace,
                            confinement=self.engine.confinement(self.workspace))  # fmt: skip
        envelope = await gateway.execute(ctx, "architect.plan.create", {"plan": document})
        assert envelope.ok, envelope
        return dict(envelope.result or {})

    async def say(self, session_id: str, text: str) -> str:
        reply = (await self.engine.submit(session_id, text))[-1]
        return str(reply.payload.get("text", ""))

    async def settle(self, session_id: str) -> QaRecord | None:
        """Until every DAG and QA pass the session started is done."""
        qa = session_qa(self.parts)
        while True:
            await self.engine.wait_dag(session_id, "")  # DAGs an approval is starting
            running = self.parts.dags.running(session_id)
            if running is not None:
                await self.engine.wait_dag(session_id, running)
            record = await qa.wait(session_id)
            if self.parts.dags.running(session_id) is None:
                return record

    def phases(self) -> list[str]:
        return [e.phase.value for e in self.events if isinstance(e, SessionPhaseChanged)]

    async def notices(self, session_id: str, stage: str | None = None) -> list[str]:
        return [str(m.payload["text"]) for m in await self.engine.transcript(session_id)
                if "qa" in m.payload and stage in (None, m.payload["qa"])]  # fmt: skip

    async def summaries(self, session_id: str) -> list[dict[str, Any]]:
        return [
            dict(m.payload)
            for m in await self.engine.transcript(session_id)
            if m.type is MessageType.AGENT_REPLY and "summary" in m.payload
        ]

    async def aclose(self) -> None:
        await self.engine.aclose()
