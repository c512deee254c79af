"""A small real MCP server (official SDK, stdio) for the MCP client tests.

Run as ``python tests/stubs/mcp_echo_server.py``. Its tools cover the cases the
hub must handle: plain and structured results, a tool error, a call that
outlives its timeout, a process that dies mid-call and a child process left
behind in the server's process group.

Its tool list can differ from one run to the next, as a server's does after an
upgrade: when ``ECHO_TOOLS_FILE`` names a file, each line ``+shout`` adds the
``shout`` tool and each line ``-name`` leaves out the tool ``name``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

server: MCPServer = MCPServer("echo", version="1.0", log_level="ERROR")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(description="Return the text unchanged.", annotations=READ_ONLY)
def echo(text: str) -> str:
    return text


@server.tool(
    description="Return the text reversed. Handy for checking round trips.", annotations=READ_ONLY
)
def reverse(text: str) -> str:
    return text[::-1]


@server.tool(name="addNumbers", description="Add two numbers and return the sum.")
def add_numbers(a: float, b: float) -> float:
    return a + b


@server.tool(
    description="Sleep for the given number of seconds, then say so. When `started` names a "
    "file, create it once the sleep has begun."
)
async def sleep(seconds: float, started: str = "") -> str:
    if started:
        await asyncio.to_thread(Path(started).touch)
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(description="Fail with a tool error carrying the given message.")
def fail(message: str) -> str:
    raise ToolError(message)


@server.tool(
    description="Write a last word to stderr and end the process with the given code.",
    annotations=ToolAnnotations(destructive_hint=True),
)
def crash(code: int = 3) -> str:
    sys.stderr.write(f"echo server: crashing on purpose with code {code}\n")
    sys.stderr.flush()
    os._exit(code)


@server.tool(description="Start a long-sleeping child process and return its pid.")
def spawn_child() -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return child.pid


@server.tool(description="Return this server's process id.", annotations=READ_ONLY)
def pid() -> int:
    return os.getpid()


def shout(text: str) -> str:
    return text.upper() + "!"


def apply_tools_file() -> None:
    name = os.environ.get("ECHO_TOOLS_FILE")
    if not name or not os.path.exists(name):
        return
    with open(name, encoding="utf-8") as changes:
        for line in changes.read().split():
            if line == "+shout":
                server.add_tool(shout, description="Return the text in capitals, exclaimed.")
            elif line.startswith("-"):
                server.remove_tool(line[1:])


if __name__ == "__main__":
    apply_tools_file()
    server.run("stdio")
