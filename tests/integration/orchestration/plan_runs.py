"""What the plan-run tests share: a scripted engine, a plan approved through /plan, the
DAG events it publishes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from backend.events import DagStatusChanged, EngineEvent
from tests.integration.plans.conftest import create, parts, say
from tests.support.scripted import read_then_edit

HANG_TEXT = "still working " * 400  # with a chunk delay: a turn that runs until cancelled


def script(
    path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]], *, delay: float = 0
) -> None:
    path.write_text(json.dumps({"turns": turns, "chunk_delay_s": delay}))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))


def architect_proposes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The Architect's turns: submit the plan (nobody is asked), then say so."""
    return [{"tool_calls": [create(plan)]}, {"text": "Stored."}]


def engineer_edits(path: str, old: str, new: str) -> list[dict[str, Any]]:
    return read_then_edit(path, old, new, said=f"Edited {path}.")


def plan(*nodes: dict[str, Any], plan_id: str = "p1", **policy: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": plan_id, "prompt": "add a --verbose flag", "nodes": list(nodes)}
    if policy:
        doc["policy"] = policy
    return doc


def node(node_id: str, agent: str, *deps: str, **metadata: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"id": node_id, "agent": agent, "prompt": f"do {node_id}",
                            "depends_on": list(deps)}  # fmt: skip
    if metadata:
        made["metadata"] = metadata
    return made


class Run:
    """An engine on ``data_dir`` with the scripted model, edits allowed, events kept."""

    def __init__(self, data_dir: Path, workspace: Path) -> None:
        self.parts = parts(data_dir, workspace, run_approved_plans=True)
        self.engine = Engine.from_parts(self.parts)
        self.events: list[EngineEvent] = []
        self.engine.events.add_listener(self.events.append)

    async def session_with_plan(self) -> str:
        session = await self.engine.ensure_session()
        await self.engine.approval_command(session.id, "auto-edit")
        await say(self.engine, session.id, "@architect add a --verbose flag")
        return session.id

    def dag_events(self) -> list[DagStatusChanged]:
        return [e for e in self.events if isinstance(e, DagStatusChanged)]

    def node_moves(self, node_id: str) -> list[str]:
        return [e.status for e in self.dag_events() if e.node_id == node_id]

    def dag_moves(self) -> list[str]:
        return [e.status for e in self.dag_events() if e.node_id is None]

    async def notices(self, session_id: str) -> list[str]:
        return [
            str(m.payload["text"])
            for m in await self.engine.transcript(session_id)
            if m.payload.get("dag")
        ]
