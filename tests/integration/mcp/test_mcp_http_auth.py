"""Bearer tokens for ``sylk mcp serve`` over HTTP: a real server process with
``--allow-remote`` (on 127.0.0.1, which the flag makes ask for a token just as an
address beyond loopback would), spoken to with raw HTTP requests and the official
SDK's clients sending the header.

Without the token, with a wrong one or another scheme, every request is 401 with
``WWW-Authenticate: Bearer``; the token is made on first use at mode 0600 and printed
only by ``sylk mcp token show``; ``rotate`` makes the running server refuse the old
value from its next request on. A named token's scopes bound the ops it runs
(``execute`` and ``batch`` alike get the gateway's ACCESS_DENIED envelope), the
resources it sees and reads, and its prompts.
"""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError

from backend.mcp.server.auth.token_store import TOKEN_FILE
from tests.integration.mcp.test_mcp_http import (
    INITIALIZE,
    JSON_POST,
    ROOT,
    STARTUP_S,
    environment,
    free_port,
    start_serve,
    structured,
    wait_for_port,
)

SCOPED = """
[mcp_server.tokens.reader]
scopes = ["domain:librarian", "resource:library"]
"""


@dataclass
class Served:
    port: int
    stderr: list[str] = field(default_factory=list)


def configure(data_dir: Path, text: str) -> None:
    folder = data_dir / "no-config"  # SYLK_CONFIG_DIR in environment()
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(text)


def sylk(data_dir: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "mcp", *words, "--data-dir", str(data_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_S,
        cwd=ROOT,
        env=environment(data_dir),
        check=False,
    )


def token(data_dir: Path, name: str = "default") -> str:
    shown = sylk(data_dir, "token", "show", name)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.strip()


@asynccontextmanager
async def served(
    data_dir: Path, workspace: Path, *flags: str, transport: str = "--http"
) -> AsyncIterator[Served]:
    """``sylk mcp serve`` on a free loopback port; its stderr is kept for the test."""
    port = free_port()
    process = await start_serve(data_dir, workspace, transport, f"127.0.0.1:{port}", *flags)
    server = Served(port)
    try:
        await wait_for_port(port, process)
        yield server
    finally:
        if process.returncode is None:
            process.terminate()
        stdout, stderr = await asyncio.wait_for(process.communicate(), STARTUP_S)
        server.stderr.append(stderr.decode())
    assert process.returncode == 0, server.stderr[0]
    assert stdout == b""
    assert "Traceback" not in server.stderr[0]
    assert "(bearer token required)" in server.stderr[0]


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def http_client(url: str, value: str) -> Client:
    transport = streamable_http_client(url, http_client=create_mcp_http_client(bearer(value)))
    return Client(transport, cache=None)


async def execute(client: Client, op: str, **args: Any) -> dict[str, Any]:
    return structured(await client.call_tool("execute", {"op": op, "args": args}))


def refused_for_scope(reply: dict[str, Any], op: str) -> None:
    assert reply["ok"] is False, reply
    assert reply["error"]["code"] == "ACCESS_DENIED", reply
    assert f"token 'reader' may not use {op}" in reply["error"]["message"]


async def refused_without_the_token(port: int, default: str) -> None:
    """No header, another scheme, an empty or forged token: 401 on every method and path."""
    async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as raw:
        for headers in ({}, {"Authorization": f"Basic {default}"}, {"Authorization": "Bearer"}):
            bare = await raw.post("/mcp", json=INITIALIZE, headers={**JSON_POST, **headers})
            assert bare.status_code == 401, headers
            assert bare.headers["WWW-Authenticate"] == 'Bearer realm="sylk"'
            assert bare.json()["error"]["message"].startswith("unauthorized")
        near = default[:-1] + ("B" if default.endswith("A") else "A")  # one character off
        forged = await raw.post("/mcp", json=INITIALIZE, headers={**JSON_POST, **bearer(near)})
        assert forged.status_code == 401
        assert 'error="invalid_token"' in forged.headers["WWW-Authenticate"]
        assert (await raw.get("/mcp", headers=JSON_POST)).status_code == 401
        assert (await raw.get("/anything")).status_code == 401
        accepted = await raw.post("/mcp", json=INITIALIZE, headers={**JSON_POST, **bearer(default)})
        assert accepted.status_code == 200


async def test_a_bearer_token_is_required_scoped_and_rotated(
    data_dir: Path, workspace: Path
) -> None:
    configure(data_dir, SCOPED)
    (workspace / "ledger.py").write_text("class Ledger:\n    pass\n")
    async with served(data_dir, workspace, "--allow-write", "--allow-remote") as server:
        url = f"http://127.0.0.1:{server.port}/mcp"
        path = data_dir / TOKEN_FILE
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        default, reader = token(data_dir), token(data_dir, "reader")
        assert default != reader

        await refused_without_the_token(server.port, default)

        async with http_client(url, default) as client:  # the server's own rights
            stored = await execute(
                client, "archivalist.chronicle.store", content="kept", category="decision"
            )
            assert stored["ok"], stored
            assert (await client.list_prompts()).prompts

        async with http_client(url, reader) as client:
            located = await execute(client, "librarian.code.search", query="Ledger")
            assert [d["path"] for d in located["result"]["definitions"]] == ["ledger.py"]
            refused_for_scope(
                await execute(client, "archivalist.chronicle.query", search_text="kept"),
                "archivalist.chronicle.query",
            )
            batch = structured(
                await client.call_tool(
                    "batch",
                    {
                        "calls": [
                            {
                                "verb": "execute",
                                "op": "librarian.code.search",
                                "args": {"query": "Ledger"},
                            },
                            {"verb": "execute", "op": "archivalist.chronicle.query", "args": {}},
                        ]
                    },
                )
            )
            first, second = batch["result"]["results"]
            assert first["ok"], batch
            refused_for_scope(second, "archivalist.chronicle.query")

            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert uris and all(uri.startswith("sylk://library/") for uri in uris)
            with pytest.raises(MCPError) as caught:
                await client.read_resource("sylk://sessions")
            assert caught.value.error.data["code"] == "ACCESS_DENIED"
            assert (await client.list_prompts()).prompts == []

        # Rotation: the running server refuses the old value from its next request on.
        rotated = sylk(data_dir, "token", "rotate", "reader")
        assert rotated.returncode == 0 and rotated.stdout == ""
        assert reader not in rotated.stderr
        fresh = token(data_dir, "reader")
        assert fresh != reader and token(data_dir) == default
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as raw:
            stale = await raw.post("/mcp", json=INITIALIZE, headers={**JSON_POST, **bearer(reader)})
            assert stale.status_code == 401
        async with http_client(url, fresh) as client:
            refused_for_scope(
                await execute(client, "archivalist.chronicle.store", content="x"),
                "archivalist.chronicle.store",
            )
    for value in (default, reader, fresh):  # never logged or echoed by the server
        assert value not in server.stderr[0]
    assert "made MCP token(s) default, reader" in server.stderr[0]


async def test_a_configured_token_guards_loopback_over_legacy_sse(
    data_dir: Path, workspace: Path
) -> None:
    configure(data_dir, "[mcp_server]\nrequire_token = true\n" + SCOPED)
    async with served(data_dir, workspace, transport="--sse") as server:
        url = f"http://127.0.0.1:{server.port}/sse"
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as raw:
            assert (await raw.get("/sse")).status_code == 401
            posted = await raw.post("/messages/?session_id=0", json=INITIALIZE)
            assert posted.status_code == 401
        async with Client(
            sse_client(url, headers=bearer(token(data_dir, "reader"))), cache=None
        ) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"search", "describe", "execute", "batch"}
            refused_for_scope(
                await execute(client, "archivalist.chronicle.query"), "archivalist.chronicle.query"
            )
        async with Client(sse_client(url, headers=bearer(token(data_dir))), cache=None) as client:
            found = await execute(client, "archivalist.chronicle.query")
            assert found["ok"], found
        # A token file opened up under the running server: nobody is let in any more.
        default = token(data_dir)
        (data_dir / TOKEN_FILE).chmod(0o644)
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as raw:
            closed = await raw.get("/sse", headers=bearer(default))
            assert closed.status_code == 503
            assert default not in closed.text


def test_a_token_file_others_may_read_stops_serve_and_show(data_dir: Path, workspace: Path) -> None:
    assert token(data_dir)  # made by the command, private
    (data_dir / TOKEN_FILE).chmod(0o644)
    for words in (
        ("serve", "--workspace", str(workspace), "--http", f"127.0.0.1:{free_port()}",
         "--allow-remote"),
        ("token", "show"),
        ("token", "rotate"),
    ):  # fmt: skip
        done = sylk(data_dir, *words)
        assert done.returncode == 1, done
        assert done.stdout == ""
        assert "refusing the MCP token file" in done.stderr and "mode 0644" in done.stderr
        assert "chmod 600" in done.stderr and "Traceback" not in done.stderr
    unknown = sylk(data_dir, "token", "show", "nobody")
    assert unknown.returncode == 1 and "no MCP token named 'nobody'" in unknown.stderr
