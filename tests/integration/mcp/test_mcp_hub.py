"""McpHub against a real MCP server process (tests/stubs/mcp_echo_server.py) over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from backend.config.mcp_servers import McpSettings
from backend.mcp.client.as_skills import to_skills
from backend.mcp.client.errors import (
    McpServerDownError,
    McpTimeoutError,
    McpToolError,
    McpUnknownOpError,
)
from backend.mcp.client.hub import McpHub, ServerState
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import OpKind, SkillContext, SkillResult
from tests.support.polling import finishes, until

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_echo_server.py"
ECHO = [sys.executable, str(STUB)]


def settings(**servers: dict[str, Any]) -> McpSettings:
    return McpSettings.model_validate({"servers": servers})


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie someone else must reap counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    async with McpHub(settings(echo={"command": ECHO, "timeout_s": 5}), cwd=tmp_path) as h:
        yield h


async def test_tools_become_hidden_ops_that_call_the_server(hub: McpHub, tmp_path: Path) -> None:
    pid = hub.status()[0].pid
    await hub.start()  # once per hub: a second start is a no-op
    assert hub.status()[0].pid == pid

    ops = {tool.op: tool for tool in hub.tools()}
    assert {"echo.echo", "echo.reverse", "echo.add_numbers", "echo.sleep", "echo.crash"} <= set(ops)
    assert ops["echo.add_numbers"].name == "addNumbers"  # the server's own name is kept
    assert ops["echo.add_numbers"].input_schema["required"] == ["a", "b"]

    skills = {skill.op: skill for skill in to_skills(hub)}
    add = skills["echo.add_numbers"]
    assert add.agent == "mcp" and add.searchable is False and add.tags == ("mcp", "echo")
    assert add.input_schema() == ops["echo.add_numbers"].input_schema  # the raw schema
    assert add.kind is OpKind.WRITE and skills["echo.reverse"].kind is OpKind.READ
    assert skills["echo.crash"].destructive and not skills["echo.echo"].destructive

    ctx = SkillContext(session_id="s1", agent="engineer", workspace=tmp_path)
    outcome = await add.handler(ctx, add.params.model_validate({"a": 2, "b": 0.5}))
    assert isinstance(outcome, SkillResult) and outcome.result == {"result": 2.5}
    with pytest.raises(ValidationError, match="'b' is a required property"):
        add.params.model_validate({"a": 2})

    reversed_ = await hub.call("echo.reverse", {"text": "sylk"})
    assert reversed_.text == "klys" and reversed_.server == "echo"
    with pytest.raises(McpToolError, match=r"failed: .*no luck") as failed:
        await hub.call("echo.fail", {"message": "no luck"})
    assert failed.value.server == "echo"
    with pytest.raises(McpUnknownOpError):
        await hub.call("echo.nothing")
    assert hub.status()[0].state is ServerState.UP


async def test_slow_or_abandoned_calls_leave_the_server_working(
    hub: McpHub, tmp_path: Path
) -> None:
    # The sleep outlasts the test: only the call's own timeout can end it.
    with pytest.raises(McpTimeoutError, match="'sleep' on server 'echo'") as slow:
        await finishes(
            hub.call("echo.sleep", {"seconds": 3600}, timeout_s=0.3), what="the call's timeout"
        )
    assert slow.value.timeout_s == 0.3
    assert (await hub.call("echo.echo", {"text": "still here"})).text == "still here"

    # A caller that gives up (cancels) does not break the session either.
    started = tmp_path / "sleeping"
    call = asyncio.create_task(hub.call("echo.sleep", {"seconds": 3600, "started": str(started)}))
    await until(started.exists, what="the server to be in the middle of the call")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (await hub.call("echo.echo", {"text": "ok"})).text == "ok"


async def test_a_crash_names_the_server_and_later_calls_fail_fast(hub: McpHub) -> None:
    pid = hub.status()[0].pid
    assert pid is not None
    with pytest.raises(McpServerDownError) as crashed:
        await hub.call("echo.crash", {"code": 7})
    error = crashed.value
    assert error.server == "echo" and error.returncode == 7
    assert "exited with code 7" in str(error)
    assert "crashing on purpose with code 7" in error.stderr_tail

    with pytest.raises(McpServerDownError) as again:
        await hub.call("echo.echo", {"text": "anyone?"})
    assert again.value is error  # the recorded failure, not a new attempt on a dead server
    assert hub.status()[0].state is ServerState.DOWN and hub.down() == [error]
    assert not alive(pid)

    # Down for good, its entry op says only why (no tools to match a search); its tools'
    # ops stay, and through the skill the gateway gets a typed error saying what happened.
    skills = {s.op: s for s in to_skills(hub)}
    entry = skills["echo.mcp_tools"]
    assert not entry.entry_point and entry.tags == ("mcp", "echo")
    note = "Unavailable: the MCP server 'echo' is down: exited with code 7 (no restart left)."
    assert entry.summary == entry.description == note
    echo = skills["echo.echo"]
    ctx = SkillContext(session_id="s1", agent="engineer", workspace=Path.cwd())
    with pytest.raises(SkillError) as typed:
        await echo.handler(ctx, echo.params.model_validate({"text": "hi"}))
    assert typed.value.code is ErrorCode.INTERNAL and typed.value.help_path == "echo.echo"
    assert typed.value.details == {"server": "echo", "returncode": 7, "reason": "mcp_server_down"}


async def test_one_restart_then_down_for_good(tmp_path: Path) -> None:
    config = settings(echo={"command": ECHO, "max_restarts": 1})
    async with McpHub(config, cwd=tmp_path) as hub:
        first = (await hub.call("echo.pid")).value()["result"]
        with pytest.raises(McpServerDownError):
            await hub.call("echo.crash", {"code": 5})
        second = (await hub.call("echo.pid")).value()["result"]  # restarted on demand
        assert second != first and hub.server("echo").restarts == 1
        with pytest.raises(McpServerDownError, match="exited with code 6"):
            await hub.call("echo.crash", {"code": 6})
        with pytest.raises(McpServerDownError, match="exited with code 6"):
            await hub.call("echo.echo", {"text": "no more restarts"})
        assert not alive(first) and not alive(second)


async def test_servers_that_cannot_start_are_down_and_the_rest_work(tmp_path: Path) -> None:
    broken = [sys.executable, "-c", "import sys; print('no config here', file=sys.stderr); exit(4)"]
    mute = [sys.executable, "-c", "import time; time.sleep(60)"]  # never answers the handshake
    config = settings(
        echo={"command": ECHO},
        missing={"command": [str(tmp_path / "no-such-server")]},
        broken={"command": broken},
        mute={"command": mute, "startup_timeout_s": 0.5},
        quiet={"command": ECHO, "enabled": False},
    )
    async with McpHub(config, cwd=tmp_path, grace_s=0.5) as hub:
        states = {s.name: s for s in hub.status()}
        assert set(states) == {"echo", "missing", "broken", "mute", "quiet"}
        assert states["quiet"].state is ServerState.DISABLED  # listed, not started
        assert states["quiet"].pid is None and "disabled" in states["quiet"].health
        assert "MCP servers disabled (no ops until enabled): quiet." in hub.health_note()
        assert states["echo"].state is ServerState.UP
        assert states["missing"].state is ServerState.DOWN
        assert "could not start" in str(states["missing"].error)
        assert "exited with code 4 while starting" in str(states["broken"].error)
        assert "no config here" in str(states["broken"].error)
        assert "did not finish starting within 0.5s" in str(states["mute"].error)
        assert states["mute"].pid is not None and not alive(states["mute"].pid)
        with pytest.raises(McpServerDownError, match="'broken' is down"):
            await hub.call_tool("broken", "anything")
        assert (await hub.call("echo.reverse", {"text": "ab"})).text == "ba"


async def test_aclose_stops_every_process_even_mid_call(tmp_path: Path) -> None:
    # A short grace: the orphaned child below is reaped by init, which may take its time.
    config = settings(one={"command": ECHO}, two={"command": ECHO})
    hub = McpHub(config, cwd=tmp_path, grace_s=0.5)
    await hub.start()
    assert await hub.wait_started()
    pids = [s.pid for s in hub.status()]
    assert all(pid is not None for pid in pids)
    child = (await hub.call("one.spawn_child")).value()["result"]  # left in one's group
    started = tmp_path / "sleeping"
    in_flight = asyncio.create_task(
        hub.call("two.sleep", {"seconds": 3600, "started": str(started)})
    )
    await until(started.exists, what="server two to be in the middle of the call")

    await hub.aclose()

    with pytest.raises(McpServerDownError, match="stopped it"):
        await in_flight
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # exited and reaped: no zombie
            os.kill(pid, 0)  # type: ignore[arg-type]
    assert not alive(child)
    assert {s.state for s in hub.status()} == {ServerState.CLOSED}
    await hub.start()  # a closed hub stays closed
    assert {s.state for s in hub.status()} == {ServerState.CLOSED}
