"""A configured MCP server that restarts with other tools: the engine's ops follow it.

The real echo server (tests/stubs/mcp_echo_server.py) reads ``ECHO_TOOLS_FILE``
when it starts; the test rewrites that file, crashes the server and lets the
next call restart it. A client of ``SylkMcpServer`` then finds the new tool
and no longer reaches the dropped one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp import Client

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.mcp.client.hub import ServerState
from backend.mcp.server.server import SylkMcpServer
from backend.skills.models import SkillContext
from tests.support.engine_env import quiet_config
from tests.support.polling import until

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_echo_server.py"


def engine_with_echo(data_dir: Path, workspace: Path, tools_file: Path) -> EngineParts:
    echo = {
        "command": [sys.executable, str(STUB)],
        "env": {"ECHO_TOOLS_FILE": str(tools_file)},
        "timeout_s": 10,
        "max_restarts": 2,
    }
    # The echo tools act outside Sylk's sandbox: allowed by rule, as nobody is asked here.
    settings = quiet_config(
        mcp_servers={"servers": {"echo": echo}}, approvals={"allow": ["echo.*"]}
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    return build(config, settings)


def structured(result: Any) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def crash(client: Client) -> None:
    """Crash the echo server through the gateway, as any caller could."""
    done = structured(await client.call_tool("execute", {"op": "echo.crash", "dry_run": False}))
    assert done["error"]["details"]["reason"] == "mcp_server_down"


async def test_ops_follow_the_tool_list_of_a_restarted_server(
    data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    tools_file = tmp_path / "echo-tools"
    parts = engine_with_echo(data_dir, workspace, tools_file)
    engine = Engine.from_parts(parts)
    try:
        await engine.start_tools()  # returns at once: the tools arrive when listed
        registry = parts.gateway.registry
        await until(lambda: "echo.reverse" in registry, what="the echo server's tools")
        assert "echo.reverse" in registry and "echo.shout" not in registry
        ctx = SkillContext(
            session_id="mcp-restart", agent="mcp-client", workspace=workspace, can_write=True
        )
        async with Client(SylkMcpServer(parts.gateway, ctx).build(), cache=None) as client:
            first_pid = parts.mcp.status()[0].pid

            # The server comes back as a new version: shout added, reverse gone.
            tools_file.write_text("+shout\n-reverse\n")
            await crash(client)
            assert "echo.reverse" in registry  # nothing is known to change until it restarts

            # Running the entry op restarts it and lists what it offers now.
            entry = structured(await client.call_tool("execute", {"op": "echo.mcp_tools"}))
            listed = [tool["op"] for tool in entry["result"]["tools"]]
            assert "echo.shout" in listed and "echo.reverse" not in listed
            assert "echo.shout" in [g["op"] for g in entry["guidance"]]
            status = parts.mcp.status()[0]
            assert status.state is ServerState.UP and status.restarts == 1
            assert status.pid != first_pid
            assert "echo.shout" in registry and "echo.reverse" not in registry

            shouted = structured(
                await client.call_tool("execute", {"op": "echo.shout", "args": {"text": "hi"}})
            )
            assert shouted["result"] == {"result": "HI!"}
            gone = structured(
                await client.call_tool("execute", {"op": "echo.reverse", "args": {"text": "x"}})
            )
            assert gone["error"]["code"] == "NOT_FOUND"
            found = structured(await client.call_tool("search", {"query": "capitals exclaimed"}))
            hits = [hit["op"] for hit in found["result"]["hits"]]
            assert "echo.shout" in hits[:2]  # the search index knows it (and guidance unveiled it)
            doc = structured(await client.call_tool("describe", {"op": "echo.mcp_tools"}))
            assert "shout" in doc["result"]["summary"] and "reverse" not in doc["result"]["summary"]

            # A plain tool call restarts it too; reverse is back and shout is gone again.
            tools_file.write_text("")
            await crash(client)
            echoed = structured(
                await client.call_tool("execute", {"op": "echo.echo", "args": {"text": "back"}})
            )
            assert echoed["result"] == {"result": "back"}
            assert parts.mcp.status()[0].restarts == 2
            assert "echo.reverse" in registry and "echo.shout" not in registry
            reversed_ = structured(
                await client.call_tool("execute", {"op": "echo.reverse", "args": {"text": "ab"}})
            )
            assert reversed_["result"] == {"result": "ba"}
    finally:
        await engine.aclose()
