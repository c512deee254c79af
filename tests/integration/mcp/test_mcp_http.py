"""``sylk mcp serve --http`` / ``--sse``: a real server process on a free loopback port,
spoken to with the official SDK's HTTP clients, and the addresses it refuses.

Each HTTP client is a caller of its own: with no ``--session`` each gets a fresh
session (so what one stores in its chronicle the other does not see), with one both
act in it. The instructions sent at initialize name the domains with their op counts.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp_types import TextResourceContents
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.knowledge.fragments.fragment import estimate_tokens
from backend.mcp.server.content.instructions import DomainSummary, domain_summaries, render
from backend.mcp.server.http_transport import (
    HttpEndpointError,
    RemoteBindError,
    parse_endpoint,
    security_settings,
)
from backend.mcp.server.server import caller_context
from tests.support.polling import until

ROOT = Path(__file__).resolve().parents[3]
STARTUP_S = 60.0  # generous: two shared cores, the engine and its index start first
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
JSON_POST = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_args(data_dir: Path, workspace: Path, *flags: str) -> list[str]:
    return [
        "-m", "sylk_tui", "mcp", "serve",
        "--data-dir", str(data_dir), "--workspace", str(workspace), *flags,
    ]  # fmt: skip


def environment(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "SYLK_CONFIG_DIR": str(data_dir / "no-config")}


async def start_serve(
    data_dir: Path, workspace: Path, *flags: str, talk: bool = False, limit: int = 1 << 16
) -> asyncio.subprocess.Process:
    """``sylk mcp serve`` as a real process, stdout and stderr piped; stdin piped when the
    test speaks stdio to it (``talk``), else closed."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *serve_args(data_dir, workspace, *flags),
        cwd=ROOT,
        env=environment(data_dir),
        stdin=asyncio.subprocess.PIPE if talk else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=limit,
    )


async def wait_for_port(port: int, process: asyncio.subprocess.Process) -> None:
    """Until something accepts on ``port``; fails if the server exits or never listens."""

    async def listening() -> bool:
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if process.returncode is not None:
                raise AssertionError(f"the server exited with {process.returncode}") from None
            return False
        writer.close()
        await writer.wait_closed()
        return True

    await until(listening, timeout=STARTUP_S, what=f"the server to listen on {port}")


@asynccontextmanager
async def http_server(
    data_dir: Path, workspace: Path, *flags: str, transport: str = "--http"
) -> AsyncIterator[int]:
    """``sylk mcp serve --http PORT`` (or ``--sse``) running; yields the port. Stopped
    with SIGTERM afterwards, which must end it cleanly."""
    port = free_port()
    process = await start_serve(data_dir, workspace, transport, f"127.0.0.1:{port}", *flags)
    try:
        await wait_for_port(port, process)
        yield port
    finally:
        if process.returncode is None:
            process.terminate()
        stdout, stderr = await asyncio.wait_for(process.communicate(), STARTUP_S)
    assert process.returncode == 0, stderr.decode()
    assert stdout == b""
    assert "Traceback" not in stderr.decode()
    assert f"serving MCP at http://127.0.0.1:{port}/" in stderr.decode()


def structured(result: Any) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


async def execute(client: Client, op: str, **args: Any) -> dict[str, Any]:
    return structured(await client.call_tool("execute", {"op": op, "args": args}))


async def store(client: Client, title: str) -> dict[str, Any]:
    stored = await execute(
        client, "archivalist.chronicle.store", content=f"{title} decided", category="decision",
        title=title,
    )  # fmt: skip
    assert stored["ok"], stored
    entry: dict[str, Any] = stored["result"]["entry"]
    return entry


async def titles(client: Client) -> list[str]:
    found = await execute(client, "archivalist.chronicle.query", search_text="decided")
    assert found["ok"], found
    return sorted(entry["title"] for entry in found["result"]["entries"])


async def make_session(data_dir: Path, workspace: Path, name: str) -> tuple[str, int]:
    """Creates session ``name``; returns its id and how many librarian ops a client that
    may write can use."""
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    parts = build(config)
    async with Engine.from_parts(parts) as engine:
        session = await engine.create_session(name)
        ctx = caller_context(engine, can_write=True)
        rows = domain_summaries(parts.gateway.registry, ctx)
    return session.id, next(row.ops for row in rows if row.name == "librarian")


async def test_http_clients_are_callers_of_their_own(data_dir: Path, workspace: Path) -> None:
    alpha, librarian_ops = await make_session(data_dir, workspace, "alpha")
    (workspace / "ledger.py").write_text("class Ledger:\n    pass\n")

    async with http_server(data_dir, workspace, "--allow-write") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, cache=None) as first, Client(url, cache=None) as second:
            # The SDK's client probes the 2026 protocol first and falls back to initialize.
            assert first.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            instructions = first.instructions or ""
            assert f"librarian {librarian_ops} (The local codebase)" in instructions
            assert "1 session at sylk://sessions" in instructions  # the one made for it
            assert re.search(r"\d+ library fragments under sylk://library", instructions)

            tools = {tool.name for tool in (await first.list_tools()).tools}
            assert tools == {"search", "describe", "execute", "batch"}
            found = structured(await first.call_tool("search", {"query": "find a class"}))
            assert "librarian.code.search" in [hit["op"] for hit in found["result"]["hits"]]
            located = await execute(first, "librarian.code.search", query="Ledger")
            assert [d["path"] for d in located["result"]["definitions"]] == ["ledger.py"]

            fragment = "sylk://library/errors/retries-backoff"
            uris = {str(r.uri) for r in (await first.list_resources()).resources}
            assert fragment in uris
            content = (await first.read_resource(fragment)).contents[0]
            assert isinstance(content, TextResourceContents) and "jitter" in content.text

            mine, theirs = await store(first, "first's"), await store(second, "second's")
            assert mine["session_id"] != theirs["session_id"]
            assert alpha not in (mine["session_id"], theirs["session_id"])
            assert await titles(first) == ["first's"]
            assert await titles(second) == ["second's"]

        async with Client(url, cache=None) as later:  # a new connection is a new caller
            assert await titles(later) == []

        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as raw:
            modern = await raw.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}},
                headers={**JSON_POST, "MCP-Protocol-Version": "2026-07-28"},
            )
            assert modern.status_code == 400
            error = modern.json()
            assert error["id"] == 7 and error["error"]["code"] == -32022
            assert error["error"]["data"]["supported"] == list(HANDSHAKE_PROTOCOL_VERSIONS)

            # DNS rebinding: a page served from another name that resolves here is refused.
            rebound = await raw.post(
                "/mcp", json=INITIALIZE, headers={**JSON_POST, "Host": f"evil.example:{port}"}
            )
            assert rebound.status_code == 421
            foreign = await raw.post(
                "/mcp", json=INITIALIZE, headers={**JSON_POST, "Origin": "http://evil.example"}
            )
            assert foreign.status_code == 403


async def test_http_clients_share_a_bound_session(data_dir: Path, workspace: Path) -> None:
    alpha, _ops = await make_session(data_dir, workspace, "alpha")
    async with http_server(data_dir, workspace, "--allow-write", "--session", "alpha") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, cache=None) as first, Client(url, cache=None) as second:
            assert "1 session at sylk://sessions" in (first.instructions or "")
            assert (await store(first, "first's"))["session_id"] == alpha
            assert await titles(second) == ["first's"]


async def test_legacy_sse_transport(data_dir: Path, workspace: Path) -> None:
    _alpha, librarian_ops = await make_session(data_dir, workspace, "alpha")
    async with http_server(data_dir, workspace, "--allow-write", transport="--sse") as port:
        url = f"http://127.0.0.1:{port}/sse"
        async with (
            Client(sse_client(url), cache=None) as first,
            Client(sse_client(url), cache=None) as second,
        ):
            assert f"librarian {librarian_ops} " in (first.instructions or "")
            tools = {tool.name for tool in (await first.list_tools()).tools}
            assert tools == {"search", "describe", "execute", "batch"}
            mine, theirs = await store(first, "first's"), await store(second, "second's")
            assert mine["session_id"] != theirs["session_id"]
            assert await titles(first) == ["first's"]


def run_serve(data_dir: Path, workspace: Path, *flags: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, *serve_args(data_dir, workspace, *flags)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_S,
        cwd=ROOT,
        env=environment(data_dir),
        check=False,
    )
    assert done.stdout == ""
    return done.returncode, done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "[::]", "example.com"])
def test_a_non_loopback_host_is_refused(host: str) -> None:
    with pytest.raises(RemoteBindError) as refused:
        parse_endpoint(f"{host}:{free_port()}")
    said = f"{refused.value} {refused.value.help_hint}"
    assert f"refusing to serve MCP on {host.strip('[]')}: it is not a loopback address" in said
    assert "--allow-remote: every request then needs a bearer token" in said


def test_serve_refuses_a_non_loopback_host_before_the_engine_opens(
    data_dir: Path, workspace: Path
) -> None:
    """The command's way of saying it (each host's refusal is the parser's, above): one
    process is enough, as each costs a whole ``sylk`` start-up."""
    code, stderr = run_serve(data_dir, workspace, "--http", f"0.0.0.0:{free_port()}")
    assert code == 1
    assert "refusing to serve MCP on 0.0.0.0: it is not a loopback address" in stderr
    assert "--allow-remote: every request then needs a bearer token" in stderr
    assert "Traceback" not in stderr
    assert not (data_dir / "sylk.db").exists()  # refused before the engine opened


def test_a_taken_port_or_a_bad_address_is_a_clear_error(data_dir: Path, workspace: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stderr = run_serve(data_dir, workspace, "--http", str(port))
    assert code == 1 and f"cannot listen on 127.0.0.1:{port}:" in stderr, stderr
    code, stderr = run_serve(data_dir, workspace, "--sse", "::1:8000")
    assert code == 1 and "expected [HOST:]PORT (an IPv6 host in brackets)" in stderr


def test_endpoints() -> None:
    assert parse_endpoint("8765") == parse_endpoint("127.0.0.1:8765")
    assert parse_endpoint("[::1]:0").url(4321) == "http://[::1]:4321/mcp"
    assert parse_endpoint("localhost:1", sse=True).url() == "http://localhost:1/sse"
    remote = parse_endpoint("0.0.0.0:80", allow_remote=True)
    assert not security_settings(remote).enable_dns_rebinding_protection
    named = security_settings(parse_endpoint("10.0.0.5:80", allow_remote=True))
    assert "10.0.0.5:*" in named.allowed_hosts and "localhost:*" in named.allowed_hosts
    with pytest.raises(RemoteBindError):
        parse_endpoint("10.0.0.5:80")
    for bad in ("", "host:", "70000", "1.2.3.4:5:6"):
        with pytest.raises(HttpEndpointError):
            parse_endpoint(bad)


async def test_instructions_stay_short_with_many_domains(
    engine: Engine, engine_parts: EngineParts
) -> None:
    ctx = caller_context(engine, can_write=True)
    rows = domain_summaries(engine_parts.gateway.registry, ctx)
    aggregated = [DomainSummary(f"server_{n}", 40 - n, "an MCP server") for n in range(8)]
    every = sorted([*rows, *aggregated], key=lambda row: (-row.ops, row.name))
    text = render(every, sessions=120, fragments=300)
    assert estimate_tokens(text) < 250
    assert f"and {len(every) - 8} more" in text and "server_0 40 (an MCP server)" in text
    assert "librarian" not in text  # past the cap: describe('') lists it
    assert sum(row.ops for row in every) == int(re.findall(r"Sylk's (\d+) ops", text)[0])


async def test_an_over_large_request_is_refused_unread_and_the_server_serves_on(
    data_dir: Path, workspace: Path
) -> None:
    from backend.mcp.server.body_limit import MAX_REQUEST_BYTES

    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "'
    huge += b"x" * (MAX_REQUEST_BYTES + 1) + b'"}}'
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    async with http_server(data_dir, workspace) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            refused = await http.post(url, content=huge, headers=headers)

            async def chunked() -> AsyncIterator[bytes]:  # no Content-Length to go by
                for start in range(0, len(huge), 1 << 20):
                    yield huge[start : start + (1 << 20)]

            streamed = await http.post(url, content=chunked(), headers=headers)
        for answer in (refused, streamed):
            assert answer.status_code == 413
            assert answer.json()["error"]["message"].startswith("request too large")
        async with Client(url, cache=None) as client:  # the server is still there
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"search", "describe", "execute", "batch"}
