"""What ``serve_engine`` does for each client: instructions told at initialize and the
client's session closed when it goes.

In process, over real loopback HTTP with the SDK's own clients, real stdio MCP servers
aggregated (one slow to list its tools, one that never answers), a real archive:

* the instructions wait (within a bound) for servers still listing, so their domains
  are counted; a hung server only adds its "still starting" note;
* a client bounded by a token's grant is told only the domains within it, and its
  search finds only those ops;
* a client's own session is closed (kept in the archive) and the gateway's state for it
  dropped once it deletes its HTTP session or lets it expire, over many connections.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from backend.config.mcp_servers import McpSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.mcp.server.auth.grants import Grant, GrantScopes
from backend.mcp.server.callers import fixed
from backend.mcp.server.client_sessions import caller_context
from backend.mcp.server.engine_serving import Served, serve_engine
from backend.mcp.server.http_sessions import SessionLimits
from backend.mcp.server.http_transport import HttpEndpoint
from tests.integration.mcp.test_mcp_http import execute, structured
from tests.support.engine_env import engine_env
from tests.support.polling import until

STUBS = Path(__file__).resolve().parents[2] / "stubs"
ECHO = STUBS / "mcp_echo_server.py"
BROKEN = STUBS / "mcp_broken_server.py"
# The echo server, slow to come up: it lists its tools a second after it starts.
SLOW_ECHO = (
    f"import runpy, time; time.sleep(1.0); runpy.run_path({str(ECHO)!r}, run_name='__main__')"
)


@asynccontextmanager
async def engine_with(
    tmp_path: Path, servers: dict[str, Any] | None = None
) -> AsyncIterator[Engine]:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    settings = load_config(None, env=engine_env())
    if servers:
        mcp = McpSettings.model_validate({"servers": servers})
        settings = settings.model_copy(update={"mcp_servers": mcp})
    config = EngineConfig(data_dir=tmp_path / "data", workspace=workspace)
    engine = Engine.from_parts(build(config, settings))
    try:
        yield engine
    finally:
        await engine.aclose()


@asynccontextmanager
async def serving(engine: Engine, **options: Any) -> AsyncIterator[str]:
    """``serve_engine`` over HTTP on a free loopback port; yields its URL."""
    url: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve_engine(
            engine, http=HttpEndpoint(port=0), stop=stop, on_listening=url.set_result, **options
        )
    )
    done, _ = await asyncio.wait({task, url}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()  # raises what stopped it
    try:
        yield url.result()
    finally:
        stop.set()
        assert await task is True


async def test_instructions_count_a_server_that_lists_its_tools_late(tmp_path: Path) -> None:
    servers = {
        "echo": {"command": [sys.executable, "-c", SLOW_ECHO], "timeout_s": 30},
        "stuck": {
            "command": [sys.executable, str(BROKEN), "hang", str(tmp_path / "pids")],
            "timeout_s": 30,
        },
    }
    # A bound shorter than echo's start: the client is answered, told what is starting.
    async with (
        engine_with(tmp_path, servers) as engine,
        serving(engine, settle_s=0.2) as url,
        Client(url, cache=None) as early,
    ):
        told = early.instructions or ""
        assert "echo" in told and "stuck" in told and "starting" in told, told
        assert "echo 1 +" not in told  # not listed yet: no ops of its to count
    # A bound long enough for echo: the answer comes as soon as it has listed (the
    # bound is waited out whole only for a server that never lists, as above).
    async with (
        engine_with(tmp_path / "b", {"echo": servers["echo"]}) as engine,
        serving(engine, settle_s=20) as url,
        Client(url, cache=None) as client,
    ):
        told = client.instructions or ""
        assert "echo 1 +" in told and "starting" not in told, told  # counted, tools behind


async def test_a_token_grant_bounds_what_a_client_is_told_and_finds(
    tmp_path: Path,
) -> None:
    async with engine_with(tmp_path) as engine:
        gateway = await engine.tools_gateway()
        served = Served(engine, gateway, caller_context(engine), fresh=True)
        reader = Grant("reader", ("domain:librarian",))

        def server(grant: Grant | None) -> Any:
            built = served.server(fixed(served.make_caller())).build()
            if grant is not None:
                built.middleware.insert(0, GrantScopes(grant))
            return built

        async with Client(server(None), cache=None) as free:
            told_free = free.instructions or ""
        async with Client(server(reader), cache=None) as bounded:
            told = bounded.instructions or ""
            found = structured(
                await bounded.call_tool("search", {"query": "create a test plan", "limit": 20})
            )
        await served.drain()
    assert "librarian" in told_free and "tester" in told_free
    assert "librarian" in told and "tester" not in told and "engineer" not in told, told
    hits = [hit["op"] for hit in found["result"]["hits"]]
    assert hits and all(op.startswith("librarian.") for op in hits), hits


async def test_a_client_session_is_closed_when_the_client_goes(tmp_path: Path) -> None:
    limits = SessionLimits(idle_s=0.3)
    async with engine_with(tmp_path) as engine:
        gateway = await engine.tools_gateway()
        async with serving(engine, limits=limits, can_write=True) as url:
            mine: list[str] = []
            for _ in range(6):  # each deletes its HTTP session on leaving
                async with Client(url, cache=None) as client:
                    described = structured(
                        await client.call_tool("describe", {"op": "librarian.file.read"})
                    )
                    assert described["ok"], described
                    stored = await execute(
                        client, "archivalist.chronicle.store", content="x", category="insight"
                    )
                    mine.append(stored["result"]["entry"]["session_id"])
            # One that just stops talking: its HTTP session expires, then the same.
            leaving = Client(streamable_http_client(url, terminate_on_close=False), cache=None)
            async with leaving as client:
                stored = await execute(
                    client, "archivalist.chronicle.store", content="y", category="insight"
                )
                mine.append(stored["result"]["entry"]["session_id"])

            def closed() -> set[str]:
                every = engine.list_sessions(include_closed=True)
                return {s.id for s in every if s.closed_at is not None}

            await until(lambda: set(mine) <= closed(), what="every client's session closed")
            assert len(set(mine)) == 7
            assert not [s for s in engine.list_sessions() if s.id in mine]  # out of lists
            for session_id in mine:
                assert not gateway.described(session_id) and not gateway.unveiled(session_id)
                # Kept in the archive with what it did.
                assert engine.get_session(session_id).name.startswith("mcp: ")
