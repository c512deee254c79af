"""A hung, slow or non-MCP server never holds anything up, and nothing of it survives.

Real processes throughout: the echo server (tests/stubs/mcp_echo_server.py) and the
misbehaving ones of tests/stubs/mcp_broken_server.py, which write their pids (and
their children's) to a file so the test can check in /proc that none is left.
Timeouts here are hang guards, far above what a working stop takes; the hung
servers' own startup timeouts are set far above them, so a start or a stop that
waited for one would fail the guard.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.mcp_servers import McpSettings
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.mcp.client.errors import McpServerDownError, McpServerStartingError
from backend.mcp.client.hub import McpHub, ServerState
from backend.skills.builtin.catalog import agent_context
from tests.integration.mcp.test_mcp_http import INITIALIZE, start_serve
from tests.integration.mcp.test_mcp_signals import StdioPeer, stopped
from tests.support.engine_env import quiet_config
from tests.support.polling import finishes, until

STUBS = Path(__file__).resolve().parents[2] / "stubs"
ECHO = [sys.executable, str(STUBS / "mcp_echo_server.py")]
NEVER_S = 600.0  # a hung server's startup timeout: far beyond any hang guard below
GUARD_S = 30.0  # a start or stop that takes this long is a hang


def broken(mode: str, pids: Path, **extra: Any) -> dict[str, Any]:
    command = [sys.executable, str(STUBS / "mcp_broken_server.py"), mode, str(pids)]
    return {"command": command, "startup_timeout_s": NEVER_S, **extra}


def settings(**servers: dict[str, Any]) -> McpSettings:
    return McpSettings.model_validate({"servers": servers})


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie someone else must reap counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@pytest.fixture
async def closing() -> AsyncIterator[list[McpHub]]:
    """Hubs a test made, closed even when it fails."""
    hubs: list[McpHub] = []
    yield hubs
    for hub in hubs:
        await hub.aclose()


async def test_start_returns_at_once_and_a_hung_server_does_not_hold_the_others(
    tmp_path: Path, closing: list[McpHub]
) -> None:
    pids = tmp_path / "pids"
    hub = McpHub(settings(echo={"command": ECHO}, hung=broken("hang", pids)), cwd=tmp_path)
    closing.append(hub)
    listed: list[str] = []
    hub.on_tools_changed(listed.append)

    await finishes(hub.start(), what="the hub's start, which must not wait for servers")
    assert {s.state for s in hub.status()} == {ServerState.STARTING}

    # The echo server's tools arrive in the background; the hung one keeps starting.
    await until(lambda: listed == ["echo"], what="echo to list its tools")
    assert (await hub.call("echo.echo", {"text": "hi"})).text == "hi"
    await until(lambda: len(pids_in(pids)) == 1, what="the hung server to run")
    state = {s.name: s for s in hub.status()}
    assert state["echo"].state is ServerState.UP and state["hung"].state is ServerState.STARTING
    lines = "\n".join(hub.status_lines())
    assert "echo" in lines and "up, " in lines and "hung" in lines and "starting (" in lines
    assert hub.health_of("hung") is not None and "starting" in str(hub.health_of("hung"))
    assert hub.health_of("echo") is None

    # A call to the server still starting waits up to its timeout, then says so, typed.
    with pytest.raises(McpServerStartingError, match="'hung' is still starting") as starting:
        await hub.call_tool("hung", "anything", {}, timeout_s=0.2)
    assert starting.value.server == "hung" and starting.value.error_kind.value == "conflict"
    assert not await hub.wait_started(timeout_s=0.1)  # the hung one still is not settled

    await finishes(hub.aclose(), what="closing a hub with a server mid-startup", timeout=GUARD_S)
    assert {s.state for s in hub.status()} == {ServerState.CLOSED}
    assert not any(alive(pid) for pid in pids_in(pids))


async def test_a_call_right_after_start_waits_for_the_server(
    tmp_path: Path, closing: list[McpHub]
) -> None:
    hub = McpHub(settings(echo={"command": ECHO, "timeout_s": GUARD_S}), cwd=tmp_path)
    closing.append(hub)
    await hub.start()
    assert hub.status()[0].state is ServerState.STARTING
    done = await hub.call_tool("echo", "reverse", {"text": "sylk"})  # waits, then answers
    assert done.text == "klys"


async def test_a_server_is_started_by_its_first_call_when_the_hub_was_not(
    tmp_path: Path, closing: list[McpHub]
) -> None:
    hub = McpHub(settings(echo={"command": ECHO}), cwd=tmp_path)
    closing.append(hub)
    assert hub.status()[0].state is ServerState.IDLE
    assert (await hub.call_tool("echo", "echo", {"text": "lazy"})).text == "lazy"
    assert hub.status()[0].state is ServerState.UP


@pytest.mark.parametrize(
    ("mode", "processes"),
    [("hang", 1), ("hang-child", 2), ("stubborn", 1)],
    ids=["hung", "hung-with-a-child", "ignores-SIGTERM"],
)
async def test_closing_mid_startup_stops_the_whole_process_group(
    tmp_path: Path, mode: str, processes: int
) -> None:
    pids = tmp_path / "pids"
    hub = McpHub(settings(hung=broken(mode, pids)), cwd=tmp_path, grace_s=0.5)
    await hub.start()
    await until(lambda: len(pids_in(pids)) == processes, what=f"the {mode} server to run")
    assert all(alive(pid) for pid in pids_in(pids))

    await finishes(hub.aclose(), what=f"closing the {mode} server mid-startup", timeout=GUARD_S)

    assert [pid for pid in pids_in(pids) if alive(pid)] == []
    assert hub.status()[0].state is ServerState.CLOSED


@pytest.mark.parametrize(
    ("mode", "timeout_s", "reason"),
    [
        ("garbage-exit", NEVER_S, "exited with code 0 while starting"),
        ("garbage", 1.0, "did not finish starting within 1s"),
    ],
    ids=["prints-garbage-and-exits", "prints-garbage-and-hangs"],
)
async def test_a_non_mcp_program_is_down_and_says_why(
    tmp_path: Path, closing: list[McpHub], mode: str, timeout_s: float, reason: str
) -> None:
    pids = tmp_path / "pids"
    config = settings(junk=broken(mode, pids, startup_timeout_s=timeout_s))
    hub = McpHub(config, cwd=tmp_path, grace_s=0.5)
    closing.append(hub)
    await hub.start()
    assert await finishes(hub.wait_started(), what="the junk server to settle", timeout=GUARD_S)

    [status] = hub.status()
    assert status.state is ServerState.DOWN and status.tools == 0
    assert status.error is not None and reason in status.error
    assert "its stdout is not MCP (3 lines not JSON-RPC" in status.error
    assert "Welcome to not-an-mcp-server" in status.error
    assert "no restart left" in status.health and "no restart left" in hub.status_lines()[0]
    assert "down: " in str(hub.health_of("junk"))
    with pytest.raises(McpServerDownError, match="stdout is not MCP"):
        await hub.call_tool("junk", "anything", {})
    assert not any(alive(pid) for pid in pids_in(pids))


async def test_listeners_hear_when_a_server_is_down_for_good(
    tmp_path: Path, closing: list[McpHub]
) -> None:
    config = settings(echo={"command": ECHO}, spare={"command": ECHO, "max_restarts": 1})
    hub = McpHub(config, cwd=tmp_path)
    closing.append(hub)
    heard: list[str] = []
    hub.on_tools_changed(heard.append)
    await hub.start()
    assert await hub.wait_started()
    heard.clear()
    assert {t.server for t in hub.tools()} == {"echo", "spare"}

    with pytest.raises(McpServerDownError):
        await hub.call("spare.crash", {"code": 3})  # a restart is left: its tools stay
    assert not hub.server("spare").down_for_good and heard == []
    assert "restarts on the next call (1 left)" in str(hub.health_of("spare"))

    with pytest.raises(McpServerDownError) as crashed:
        await hub.call("echo.crash", {"code": 7})  # none left: down for good
    assert heard == ["echo"]  # so the ops built from its tools can say so
    assert hub.server("echo").down_for_good and not hub.server("spare").down_for_good
    # Its op is still known, and a call says why it cannot run.
    with pytest.raises(McpServerDownError) as again:
        await hub.call("echo.echo", {"text": "anyone?"})
    assert again.value is crashed.value
    assert "down: exited with code 7 (no restart left)" in str(hub.health_of("echo"))


async def test_sylk_mcp_serve_answers_at_once_and_a_sigterm_mid_startup_leaves_nothing(
    data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    """The reported case: a hung server (with a child) held ``initialize`` for its startup
    timeout, and a SIGTERM then left it running under PID 1."""
    pids = tmp_path / "pids"
    config_dir = data_dir / "no-config"
    config_dir.mkdir()
    hung = broken("hang-child", pids)
    (config_dir / "config.toml").write_text(
        f"[mcp_servers.servers.hung]\ncommand = {json.dumps(hung['command'])}\n"
        f"startup_timeout_s = {NEVER_S}\n"
    )
    process = await start_serve(data_dir, workspace, talk=True)
    peer = StdioPeer(process)
    try:
        # Answered while the hung server is still starting (its timeout is NEVER_S).
        reply = await peer.request("initialize", dict(INITIALIZE["params"]))
        instructions = reply["result"]["instructions"]
        assert "MCP servers still starting, their ops searchable once listed: hung." in instructions
        await peer.notify("notifications/initialized")
        await until(lambda: len(pids_in(pids)) == 2, what="the hung server and its child")
        assert all(alive(pid) for pid in pids_in(pids))
        code, stderr = await stopped(process, signal.SIGTERM)  # STOP_S guards a hang
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert code == 0, stderr
    assert [pid for pid in pids_in(pids) if alive(pid)] == []


async def test_status_and_search_show_each_servers_health(
    data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    servers = {
        "echo": {"command": ECHO},
        "hung": broken("hang", pids),
        "junk": broken("garbage-exit", pids),
    }
    settings_ = quiet_config(mcp_servers={"servers": servers})
    parts = build(
        EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False), settings_
    )
    async with Engine.from_parts(parts) as engine:
        session = await engine.ensure_session()
        await finishes(engine.start_tools(), what="starting the tool servers in the background")
        registry = parts.gateway.registry
        await until(lambda: "echo.mcp_tools" in registry, what="echo's tools")
        await until(lambda: parts.mcp.server("junk").state is ServerState.DOWN, what="junk down")

        status = engine.status_text(session.id)
        block = status.split("MCP servers:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        lines = {line.split()[0]: line for line in block}
        assert "up, " in lines["echo"] and "tools" in lines["echo"]
        assert "starting (" in lines["hung"]
        assert "down: exited with code 0 while starting" in lines["junk"]
        assert "stdout is not MCP" in lines["junk"] and "no restart left" in lines["junk"]
        note = engine.tool_servers_note()  # what the MCP server's instructions add
        assert "MCP servers still starting, their ops searchable once listed: hung." in note
        assert "MCP servers down: junk (exited with code 0 while starting; its stdout" in note
        assert "echo" not in note

        ctx = agent_context("architect", session.id, workspace)
        found = parts.gateway.search(ctx, "reverse the text")
        assert "echo.mcp_tools" in json.dumps(found.result)

        # Down for good: a search for what its tools did no longer finds it; a search for
        # the server, and describe of its domain, say it is down and why.
        with pytest.raises(McpServerDownError):
            await parts.mcp.call("echo.crash", {"code": 9})
        entry = "echo.mcp_tools"
        await until(lambda: not registry.require(entry).entry_point, what="echo marked down")
        assert "echo." not in json.dumps(parts.gateway.search(ctx, "reverse the text").result)
        why = "Unavailable: the MCP server 'echo' is down: exited with code 9 (no restart left)."
        hits = parts.gateway.search(ctx, "echo server").result["hits"]
        assert hits[0]["op"] == entry and why in json.dumps(hits[0])
        assert why in json.dumps(parts.gateway.describe(ctx, "echo").result)
        status = engine.status_text(session.id)
        assert "down: exited with code 9 (no restart left)" in status
