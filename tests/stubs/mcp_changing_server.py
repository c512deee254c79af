"""A real MCP server (official SDK, stdio) whose tool list changes while it runs.

Run as ``python tests/stubs/mcp_changing_server.py``. Its ``add_tool``, ``remove_tool``
and ``upgrade_greet`` tools change the tool list, then tell the client with
``notifications/tools/list_changed`` (``notify`` times, to play a burst; 0 for a server
that never tells, which a client only sees by listing again).

The era is the client's choice: a 2026-era client hears the change on its
``subscriptions/listen`` stream, a 2025-era one as a bare notification. With
``CHANGING_ERA=legacy`` the server refuses the 2026 ``server/discover`` probe, so an
``auto`` client falls back to the ``initialize`` handshake, as an older server (most npm
servers today) makes it do.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

server: MCPServer = MCPServer("changing", version="1.0", log_level="ERROR")


@server.tool(description="Answer pong.")
def ping() -> str:
    return "pong"


def greet_v1(name: str) -> str:
    return f"hello {name}"


def greet_v2(name: str, loud: bool = False) -> str:
    text = f"hello {name}"
    return text.upper() if loud else text


server.add_tool(greet_v1, name="greet", description="Greet someone by name.")


async def _tell(ctx: Context, times: int) -> None:
    for _ in range(times):
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()


@server.tool(description="Add a tool named `name` that echoes its `text`, then notify.")
async def add_tool(name: str, ctx: Context, notify: int = 1) -> str:
    def added(text: str) -> str:
        return f"{name}: {text}"

    server.add_tool(added, name=name, description=f"Echo text, as the added tool {name}.")
    await _tell(ctx, notify)
    return f"added {name}"


@server.tool(description="Remove the tool named `name`, then notify.")
async def remove_tool(name: str, ctx: Context, notify: int = 1) -> str:
    server.remove_tool(name)
    await _tell(ctx, notify)
    return f"removed {name}"


@server.tool(description="Give `greet` a second argument, `loud`, then notify.")
async def upgrade_greet(ctx: Context, notify: int = 1) -> str:
    server.remove_tool("greet")
    server.add_tool(greet_v2, name="greet", description="Greet someone, loudly if asked.")
    await _tell(ctx, notify)
    return "greet upgraded"


async def _refusing_discover(
    inbound: Any, outbound: Any, to_server: Any, write: Any
) -> None:  # pragma: no cover - runs in the subprocess
    """Pass the client's messages on, answering ``server/discover`` as an unknown method."""
    async with to_server:
        async for item in inbound:
            message = getattr(item, "message", None)
            if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                await write.send(SessionMessage(reply))
                continue
            await to_server.send(item)


async def serve_legacy() -> None:  # pragma: no cover - runs in the subprocess
    low = server._lowlevel_server  # the stub plays an older server
    async with stdio_server() as (read, write):
        to_server, from_client = anyio.create_memory_object_stream[Any](16)
        async with anyio.create_task_group() as group:
            group.start_soon(_refusing_discover, read, None, to_server, write)
            await low.run(from_client, write, low.create_initialization_options())
            group.cancel_scope.cancel()


if __name__ == "__main__":
    if os.environ.get("CHANGING_ERA") == "legacy":
        anyio.run(serve_legacy)
    else:
        server.run()
