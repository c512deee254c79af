"""Streamable-HTTP sessions of ``sylk mcp serve --http`` expire when idle and are bounded.

A real server on a loopback port, real SDK clients and raw HTTP. A client that leaves
without deleting its session (the SDK's client with ``terminate_on_close=False``, or a
raw one that stops sending) used to keep its session and its caller for good; now,
once no request has been in flight for the idle time the test sets (a fraction of a
second, found by polling, never by sleeping), the session ends, its caller is let go,
and its id is answered 404 so a client initializes anew. While ``max_sessions`` are
open another initialize is answered 503, until one expires.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from backend.engine import Engine, EngineParts
from backend.mcp.server.callers import Caller, CallerLookup, SessionCallers
from backend.mcp.server.http_sessions import SessionLimits, SessionLimitsError
from backend.mcp.server.http_transport import HttpEndpoint, listen, serve_http
from backend.mcp.server.server import SylkMcpServer, caller_context, engine_caller
from tests.integration.mcp.test_mcp_http import INITIALIZE, JSON_POST, http_server, run_serve
from tests.support.polling import until

IDLE_S = 0.3
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Served:
    """Sylk's MCP server over HTTP in this process, for a look at its callers."""

    def __init__(self, url: str, callers: SessionCallers, released: list[Caller]) -> None:
        self.url = url
        self.callers = callers
        self.released = released


@asynccontextmanager
async def serving(
    engine: Engine, parts: EngineParts, limits: SessionLimits
) -> AsyncIterator[Served]:
    gateway = parts.gateway
    released: list[Caller] = []
    callers = SessionCallers(
        lambda: engine_caller(engine, gateway, caller_context(engine)),
        released.append,
        capacity=limits.max_sessions,
    )

    def make_server(lookup: CallerLookup) -> Server[Any]:
        return SylkMcpServer(gateway, caller_context(engine), callers=lookup).build()

    endpoint = HttpEndpoint(port=0)
    sock = listen(endpoint)
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve_http(endpoint, sock, make_server, callers, stop, limits=limits)
    )
    try:
        yield Served(endpoint.url(sock.getsockname()[1]), callers, released)
    finally:
        stop.set()
        await task


async def open_session(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    """A raw initialize (and, if it opened a session, the initialized notification)."""
    opened = await http.post(url, json=INITIALIZE, headers=JSON_POST)
    session = opened.headers.get(MCP_SESSION_ID_HEADER)
    if opened.status_code == 200 and session:
        headers = {**JSON_POST, MCP_SESSION_ID_HEADER: session}
        headers["MCP-Protocol-Version"] = HANDSHAKE_PROTOCOL_VERSIONS[-1]
        done = await http.post(url, json=INITIALIZED, headers=headers)
        assert done.status_code == 202, done.text
    return opened


async def call(
    http: httpx2.AsyncClient, url: str, session: str, method: str = "ping"
) -> httpx2.Response:
    headers = {**JSON_POST, MCP_SESSION_ID_HEADER: session}
    headers["MCP-Protocol-Version"] = HANDSHAKE_PROTOCOL_VERSIONS[-1]
    return await http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": method}, headers=headers)


async def test_a_client_that_leaves_without_deleting_its_session_is_let_go(
    engine: Engine, engine_parts: EngineParts
) -> None:
    async with serving(engine, engine_parts, SessionLimits(idle_s=IDLE_S)) as served:
        leaving = Client(streamable_http_client(served.url, terminate_on_close=False), cache=None)
        async with leaving as client:
            await client.list_resources()  # the first request that needs the caller
            assert len(served.callers) == 1
        # Polled by looking, never by a request: a request would keep the session alive.
        await until(lambda: len(served.callers) == 0, what="the idle session to end")
        assert [caller.context.session_id[:4] for caller in served.released] == ["mcp-"]

        async with httpx2.AsyncClient(timeout=30) as http:
            session = (await open_session(http, served.url)).headers[MCP_SESSION_ID_HEADER]
            listed = await call(http, served.url, session, "resources/list")
            assert listed.status_code == 200 and session in served.callers
            await until(lambda: session not in served.callers, what="the raw session to end")
            gone = await call(http, served.url, session)
            assert gone.status_code == 404  # the spec's answer: initialize anew
            assert gone.json()["error"]["message"] == "Session not found"
        assert len(served.released) == 2

        async with Client(served.url, cache=None) as again:  # a new session serves
            assert {t.name for t in (await again.list_tools()).tools} >= {"search", "execute"}


async def test_a_connected_client_keeps_its_session_and_the_idle_one_goes(
    engine: Engine, engine_parts: EngineParts
) -> None:
    """A connected SDK client holds its event stream open: its session is in use, not
    idle, however long it waits between calls; a session nobody uses meanwhile ends.
    A client that deletes its session on leaving has its caller let go at once."""
    async with serving(engine, engine_parts, SessionLimits(idle_s=IDLE_S)) as served:
        async with Client(served.url, cache=None) as client:
            await client.list_resources()
            async with httpx2.AsyncClient(timeout=30) as http:
                idle = (await open_session(http, served.url)).headers[MCP_SESSION_ID_HEADER]
                assert (await call(http, served.url, idle, "resources/list")).status_code == 200
                assert len(served.callers) == 2
                await until(lambda: idle not in served.callers, what="the idle session to end")
                assert (await call(http, served.url, idle)).status_code == 404
            assert len(served.callers) == 1  # the connected client's, past the idle time
            await client.list_resources()
            assert len(served.released) == 1  # the same caller serves on
        await until(lambda: len(served.callers) == 0, what="the deleted session's caller to go")
        assert len(served.released) == 2


async def test_sessions_are_bounded_and_an_expired_one_makes_room(
    data_dir: Path, workspace: Path
) -> None:
    flags = ("--session-idle", str(IDLE_S), "--max-sessions", "2")
    async with http_server(data_dir, workspace, *flags) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            first = await open_session(http, url)
            second = await open_session(http, url)
            assert first.status_code == second.status_code == 200
            ids = {first.headers[MCP_SESSION_ID_HEADER], second.headers[MCP_SESSION_ID_HEADER]}
            assert len(ids) == 2

            async def room() -> bool:  # asked by initialize, which touches no open session
                return (await open_session(http, url)).status_code == 200

            refused = await http.post(url, json=INITIALIZE, headers=JSON_POST)
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["message"] == "Too many open sessions"
            await until(room, what="an idle session to expire and make room")

            async def both_gone() -> bool:  # a ping keeps a live session alive for IDLE_S
                answers = [(await call(http, url, session)).status_code for session in ids]
                assert set(answers) <= {200, 404}, answers
                return answers == [404, 404]

            await until(both_gone, what="both to answer 404", interval=2 * IDLE_S)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--session-idle", "0"), "the session idle time must be a positive number"),
        (("--session-idle", "nan"), "the session idle time must be a positive number"),
        (("--max-sessions", "0"), "the number of sessions must be a positive number"),
    ],
)
def test_bad_limits_are_a_clear_error(
    data_dir: Path, workspace: Path, flags: tuple[str, str], said: str
) -> None:
    code, stderr = run_serve(data_dir, workspace, "--http", "0", *flags)
    assert code == 1 and said in stderr and "Traceback" not in stderr, stderr


def test_limits_validate() -> None:
    assert SessionLimits() == SessionLimits(1800.0, 100)
    with pytest.raises(SessionLimitsError):
        SessionLimits(idle_s=float("inf"))
