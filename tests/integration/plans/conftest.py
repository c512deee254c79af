"""What the plan tests share: plan documents, a scripted Architect, the tool results it got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from tests.support.scripted import execute, write_script


def plan_doc(plan_id: str = "p1", *, engineers: int = 2) -> dict[str, Any]:
    """A librarian node, then ``engineers`` engineer nodes that run together."""
    nodes: list[dict[str, Any]] = [
        {"id": "t1", "agent": "librarian", "prompt": "Find the CLI's flag parsing"}
    ]
    for n in range(engineers):
        nodes.append({"id": f"e{n + 1}", "agent": "engineer", "prompt": f"Change part {n + 1}",
                      "depends_on": ["t1"]})  # fmt: skip
    return {"id": plan_id, "prompt": "add a --verbose flag", "nodes": nodes}


def bad_doc(plan_id: str = "p1") -> dict[str, Any]:
    """Two problems: an agent Sylk lacks and a dependency on a node the plan lacks."""
    return {"id": plan_id, "nodes": [
        {"id": "t1", "agent": "wizard", "prompt": "magic"},
        {"id": "t2", "agent": "engineer", "prompt": "x", "depends_on": ["t9"]},
    ]}  # fmt: skip


def create(plan: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return execute("architect.plan.create", plan=plan, **extra)


def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]]) -> None:
    monkeypatch.setenv("SYLK_SCRIPT", str(write_script(tmp_path / "script.json", turns)))


def parts(data_dir: Path, workspace: Path, **config: Any) -> EngineParts:
    """Approved plans do not run here unless asked (their nodes would take script turns)."""
    config.setdefault("run_approved_plans", False)
    return build(EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                              watch_files=False, **config))  # fmt: skip


def tool_results(engine_parts: EngineParts, session_id: str) -> list[dict[str, Any]]:
    """Every envelope the session's agents got back from a tool call, in order."""
    rows = engine_parts.archive.load_steps(session_id)
    found = []
    for row in rows:
        if row["kind"] == "tool_result":
            found.append(json.loads(json.loads(row["data"])["data"]["content"]))
    return found


async def say(engine: Engine, session_id: str, text: str) -> dict[str, Any]:
    reply = (await engine.submit(session_id, text))[-1]
    return dict(reply.payload) | {"type": reply.type}
