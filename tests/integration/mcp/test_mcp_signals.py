"""SIGINT and SIGTERM stop ``sylk mcp serve`` cleanly, on stdio and over HTTP.

A real server process, bound to a session created beforehand, with a real MCP server
(the echo stub) in its hub. A client stores a decision through it and has the echo
server start a long-sleeping child in its process group; then the signal. The server
must exit promptly with status 0 and nothing on stderr but its own words, having
closed its engine: the echo server and its child are gone, and the SQLite archive
opens with the session and the decision in it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.skills.builtin.catalog import agent_context
from tests.integration.mcp.test_mcp_http import (
    STARTUP_S,
    free_port,
    start_serve,
    wait_for_port,
)
from tests.support.polling import until

ROOT = Path(__file__).resolve().parents[3]
STUB = ROOT / "tests" / "stubs" / "mcp_echo_server.py"
STOP_S = 30.0  # how long a stop may take before it counts as a hang
DECISION = "Ledgers close at midnight UTC"


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie someone else must reap counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def prepare(data_dir: Path, workspace: Path) -> str:
    """Session alpha in the archive, and a config that starts the echo server."""
    config_dir = data_dir / "no-config"
    config_dir.mkdir()
    command = json.dumps([sys.executable, str(STUB)])
    # The echo tools act outside Sylk's sandbox: allowed by rule, as nobody is asked here.
    (config_dir / "config.toml").write_text(
        f'[mcp_servers.servers.echo]\ncommand = {command}\n[approvals]\nallow = ["echo.*"]\n'
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    async with Engine(config) as engine:
        return (await engine.create_session("alpha")).id


async def assert_archive_intact(data_dir: Path, workspace: Path, alpha: str) -> None:
    # The last connection to close checkpoints and removes the write-ahead log: one
    # left behind means the server ended without closing its archive.
    assert not (data_dir / "sylk.db-wal").exists()
    with sqlite3.connect(data_dir / "sylk.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    parts = build(config)
    async with Engine.from_parts(parts) as engine:
        assert engine.get_session("alpha").id == alpha
        found = await parts.gateway.execute(
            agent_context("archivalist", alpha, workspace),
            "archivalist.chronicle.query",
            {"search_text": "midnight"},
        )
        assert [e["content"] for e in found.result["entries"]] == [DECISION]


def tool_result(response: dict[str, Any]) -> Any:
    body = response["result"]["structuredContent"]
    assert body["ok"], body
    return body["result"]


class StdioPeer:
    """The client side of a stdio server, spoken to line by line, as the SDK's client
    would; stdin stays open until the test closes it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self.ids = 0

    async def notify(self, method: str) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        await self.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.stdin.write(json.dumps(message).encode() + b"\n")
        await self.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.stdout.readline(), STARTUP_S)
            assert line, "the server closed stdout"
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self.ids:
                assert "error" not in reply, reply
                return reply

    async def execute(self, op: str, **args: Any) -> Any:
        params = {"name": "execute", "arguments": {"op": op, "args": args, "dry_run": False}}
        return tool_result(await self.request("tools/call", params))


async def once_listed(execute: Callable[[str], Awaitable[Any]], op: str) -> Any:
    """Run ``op`` of an external MCP server once it has listed its tools: servers start
    in the background, so their ops appear a moment after the serve is ready."""
    found: list[Any] = []

    async def listed() -> bool:
        try:
            found.append(await execute(op))
        except AssertionError:  # not an op yet: the server has not listed its tools
            return False
        return True

    await until(listed, timeout=STARTUP_S, what=f"{op} to be listed")
    return found[-1]


async def stopped(process: asyncio.subprocess.Process, sig: signal.Signals) -> tuple[int, str]:
    process.send_signal(sig)
    _stdout, stderr = await asyncio.wait_for(process.communicate(), STOP_S)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_stdio_server_stops_cleanly(
    data_dir: Path, workspace: Path, sig: signal.Signals
) -> None:
    alpha = await prepare(data_dir, workspace)
    flags = ("--session", "alpha", "--allow-write")
    process = await start_serve(data_dir, workspace, *flags, talk=True)
    peer = StdioPeer(process)
    try:
        await peer.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        await peer.notify("notifications/initialized")
        stored = await peer.execute(
            "archivalist.chronicle.store", content=DECISION, category="decision"
        )
        assert stored["entry"]["session_id"] == alpha
        await once_listed(peer.execute, "echo.mcp_tools")  # unveils the echo server's tools
        echo = await peer.execute("echo.pid")
        child = await peer.execute("echo.spawn_child")

        code, stderr = await stopped(process, sig)  # stdin is still open
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert code == 0, stderr
    assert stderr == ""
    assert not alive(echo["result"]) and not alive(child["result"])
    await assert_archive_intact(data_dir, workspace, alpha)


async def test_http_server_stops_cleanly_with_a_client_connected(
    data_dir: Path, workspace: Path
) -> None:
    alpha = await prepare(data_dir, workspace)
    port = free_port()
    flags = ("--http", str(port), "--session", "alpha", "--allow-write")
    process = await start_serve(data_dir, workspace, *flags)
    try:
        await wait_for_port(port, process)
        async with Client(f"http://127.0.0.1:{port}/mcp", cache=None) as client:

            async def execute(op: str, **args: Any) -> Any:
                call = {"op": op, "args": args, "dry_run": False}
                result = await client.call_tool("execute", call)
                assert isinstance(result.structured_content, dict)
                assert result.structured_content["ok"], result.structured_content
                return result.structured_content["result"]

            await execute("archivalist.chronicle.store", content=DECISION, category="decision")
            await once_listed(execute, "echo.mcp_tools")
            echo = (await execute("echo.pid"))["result"]
            child = (await execute("echo.spawn_child"))["result"]
            # Stopped while this client's session (and its event stream) is open.
            code, stderr = await stopped(process, signal.SIGTERM)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert code == 0, stderr
    assert stderr.splitlines() == [
        f"sylk: serving MCP at http://127.0.0.1:{port}/mcp (no authentication); "
        "stop with Ctrl-C or SIGTERM"
    ]
    assert not alive(echo) and not alive(child)
    await assert_archive_intact(data_dir, workspace, alpha)
