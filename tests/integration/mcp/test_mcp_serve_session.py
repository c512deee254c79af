"""``sylk mcp serve --session`` / ``--cross-session``: a real server process, the official
client, and a chronicle written by the engine into a real SQLite archive.

A decision recorded in session alpha is alpha's own until it is promoted: a
client of a fresh MCP session or of session beta does not see it, a client
bound to alpha does, and the cross-session scope lets a client read it from
anywhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.skills.builtin.catalog import agent_context

ROOT = Path(__file__).resolve().parents[3]
DECISION = "Archive writes go through one writer task"


def dirs(data_dir: Path, workspace: Path) -> list[str]:
    return ["--data-dir", str(data_dir), "--workspace", str(workspace)]


@asynccontextmanager
async def serve(data_dir: Path, workspace: Path, *flags: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sylk_tui", "mcp", "serve", *dirs(data_dir, workspace), *flags],
        cwd=ROOT,
        env={k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
    )
    async with Client(server, cache=None) as client:
        yield client


async def execute(client: Client, op: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool("execute", {"op": op, "args": args})
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def titles(envelope: dict[str, Any]) -> list[str]:
    assert envelope["ok"], envelope
    return [entry["title"] for entry in envelope["result"]["entries"]]


async def record_decision(data_dir: Path, workspace: Path) -> dict[str, str]:
    """Sessions alpha and beta; alpha's Archivalist records a decision. Returns name -> id."""
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    parts = build(config)
    async with Engine.from_parts(parts) as engine:
        alpha = await engine.create_session("alpha")
        beta = await engine.create_session("beta")
        stored = await parts.gateway.execute(
            agent_context("archivalist", alpha.id, workspace),
            "archivalist.chronicle.store",
            {"content": DECISION, "category": "decision", "title": "single writer"},
        )
        assert stored.ok, stored
        return {"alpha": alpha.id, "beta": beta.id, "entry": stored.result["entry"]["id"]}


async def promote(data_dir: Path, workspace: Path, session_id: str, entry_id: str) -> None:
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    parts = build(config)
    async with Engine.from_parts(parts):
        promoted = await parts.gateway.execute(
            agent_context("archivalist", session_id, workspace),
            "archivalist.pattern.promote",
            {"pattern_id": entry_id, "reason": "every session should know"},
        )
        assert promoted.ok, promoted


@pytest.mark.slow
async def test_a_decision_is_seen_in_its_session_or_with_the_cross_session_scope(
    data_dir: Path, workspace: Path
) -> None:
    ids = await record_decision(data_dir, workspace)
    query = "archivalist.chronicle.query"

    async with serve(data_dir, workspace) as client:  # a fresh session of the client's own
        assert titles(await execute(client, query, search_text="writer")) == []
        denied = await execute(client, query, search_text="writer", cross_session=True)
        assert denied["error"]["code"] == "ACCESS_DENIED"
        other = await execute(client, "archivalist.chronicle.cross_session_query")
        assert other["error"]["code"] == "ACCESS_DENIED"

    async with serve(data_dir, workspace, "--session", "alpha") as client:
        found = await execute(client, query, search_text="writer")
        assert titles(found) == ["single writer"]
        entry = found["result"]["entries"][0]
        assert entry["session_id"] == ids["alpha"] and entry["content"] == DECISION
        briefing = await execute(client, "archivalist.memory.briefing")
        assert "single writer" in briefing["result"]["text"]

    async with serve(data_dir, workspace, "--session", ids["beta"][:8]) as client:
        assert titles(await execute(client, query, search_text="writer")) == []

    flags = ("--session", "beta", "--cross-session", "--allow-write")
    async with serve(data_dir, workspace, *flags) as client:
        wide = await execute(client, query, search_text="writer", cross_session=True)
        assert titles(wide) == ["single writer"] and wide["result"]["scope"] == "every session"
        others = await execute(client, "archivalist.chronicle.cross_session_query")
        assert titles(others) == ["single writer"]
        # Reading across sessions does not make the client alpha: it writes only as beta.
        refused = await execute(
            client, "archivalist.chronicle.store", session_id=ids["alpha"],
            content="x", category="decision",
        )  # fmt: skip
        assert refused["error"]["code"] == "ACCESS_DENIED"
        assert refused["error"]["details"]["reason"] == "cross_session"
        stored = await execute(
            client, "archivalist.chronicle.store", content="beta's own note", category="insight"
        )
        assert stored["result"]["entry"]["session_id"] == ids["beta"]

    async with serve(data_dir, workspace, "--cross-session") as client:
        wide = await execute(client, query, search_text="writer", cross_session=True)
        assert titles(wide) == ["single writer"]

    # Promoted, the decision is global: any client sees it, no scope needed.
    await promote(data_dir, workspace, ids["alpha"], ids["entry"])
    async with serve(data_dir, workspace) as client:
        found = await execute(client, query, search_text="writer")
        assert titles(found) == ["single writer"]
        assert found["result"]["entries"][0]["promoted"] is True


def test_an_unknown_session_is_a_clear_error(data_dir: Path, workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "mcp", "serve", "--session", "nope",
         *dirs(data_dir, workspace)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""  # no protocol was started
    assert "sylk: error: no session matches 'nope'" in done.stderr
    assert "sylk sessions list" in done.stderr and "Traceback" not in done.stderr


async def test_transcripts_are_private_to_their_session_unless_cross_session(
    data_dir: Path, workspace: Path
) -> None:
    from mcp import MCPError

    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    async with Engine(config) as engine:
        alpha = await engine.create_session("alpha")
        await engine.submit(alpha.id, "/help")
    uri = f"sylk://sessions/{alpha.id}/transcript"

    async with serve(data_dir, workspace) as client:  # a fresh session of its own
        denied = await execute(client, "sessions.transcript", session_id=alpha.id)
        assert denied["error"]["code"] == "ACCESS_DENIED"
        assert "history.cross_session" in denied["error"]["message"]
        listed = (await execute(client, "sessions.list"))["result"]
        own = [row["name"] for row in listed["sessions"]]  # the client's own, made for it
        assert own == ["mcp: mcp"] and "1 other sessions" in listed["note"]
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uri not in uris and "sylk://sessions" in uris
        with pytest.raises(MCPError, match="transcript is private"):
            await client.read_resource(uri)

    async with serve(data_dir, workspace, "--cross-session") as client:
        read = await execute(client, "sessions.transcript", session_id=alpha.id[:8])
        assert read["result"]["messages"][0]["payload"]["text"] == "/help"
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uri in uris
