"""MCP servers whose tools change while Sylk runs: list_changed, refresh, the ops follow.

A real stub server (tests/stubs/mcp_changing_server.py) adds, removes and reshapes
tools when asked and says so with ``notifications/tools/list_changed``, in either
protocol era (2026: on a listen stream; 2025: bare). The hub re-lists it once per
burst and the gateway's search, describe and execute follow.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.mcp_servers import McpSettings
from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.hub import McpHub, ServerState
from backend.skills.builtin.catalog import build_gateway
from backend.skills.envelopes import Envelope
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from tests.support.engine_env import quiet_config
from tests.support.polling import until

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_changing_server.py"


def changing(era: str = "", **extra: Any) -> dict[str, Any]:
    env = {"CHANGING_ERA": era} if era else {}
    return {"command": [sys.executable, str(STUB)], "env": env, "timeout_s": 10, **extra}


async def started(hub: McpHub, gateway: Gateway) -> None:
    attach_skills(hub, gateway.registry)
    await hub.start()
    await until(lambda: "changing.ping" in gateway.registry, what="the server's tools as ops")


def ctx(workspace: Path) -> SkillContext:
    return SkillContext(session_id="s", agent="engineer", workspace=workspace, can_write=True)


def ok(envelope: Envelope) -> Any:
    assert envelope.ok, envelope.error
    return envelope.result


@pytest.fixture
async def gateway() -> Gateway:
    return build_gateway()


@pytest.fixture(params=["modern", "legacy"])
async def hub(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[McpHub]:
    era = "" if request.param == "modern" else "legacy"
    settings = McpSettings.model_validate({"servers": {"changing": changing(era)}})
    async with McpHub(settings, cwd=tmp_path, debounce_s=0.5) as h:
        yield h
    assert h.status()[0].state is ServerState.CLOSED


async def test_a_burst_of_list_changed_is_one_relisting_and_the_ops_follow(
    hub: McpHub, gateway: Gateway, tmp_path: Path
) -> None:
    await started(hub, gateway)
    registry, caller = gateway.registry, ctx(tmp_path)
    version = registry.version
    assert "changing.shout" not in registry

    # The server adds a tool and tells five times: one re-listing, a new op.
    ok(await gateway.execute(caller, "changing.add_tool", {"name": "shout", "notify": 5}))
    await until(lambda: "changing.shout" in registry, what="the added tool as an op")
    await hub.relists.settled()
    assert hub.relists.runs == 1
    assert registry.version != version  # search and help caches key on it
    assert ok(await gateway.execute(caller, "changing.shout", {"text": "hi"})) == {
        "result": "shout: hi"
    }
    hits = ok(gateway.search(caller, "shout"))["hits"]
    assert "changing.mcp_tools" in [hit["op"] for hit in hits]  # the way in names it now

    # A changed schema is picked up: greet takes `loud` now.
    assert "loud" not in registry.require("changing.greet").input_schema()["properties"]
    ok(await gateway.execute(caller, "changing.upgrade_greet", {}))
    await until(
        lambda: "loud" in registry.require("changing.greet").input_schema()["properties"],
        what="greet's new schema",
    )
    loud = ok(await gateway.execute(caller, "changing.greet", {"name": "ada", "loud": True}))
    assert loud == {"result": "HELLO ADA"}

    # A removed tool leaves search, describe and execute, each saying which server dropped it.
    ok(await gateway.execute(caller, "changing.remove_tool", {"name": "shout"}))
    await until(lambda: "changing.shout" not in registry, what="the removed tool's op gone")
    gone = await gateway.execute(caller, "changing.shout", {"text": "hi"})
    assert gone.error is not None and gone.error.code == "NOT_FOUND"
    assert "'changing' no longer offers it" in gone.error.message
    assert gone.error.details["reason"] == "mcp_tool_gone"
    described = gateway.describe(caller, "changing.shout")
    assert described.error is not None and "no longer offers" in described.error.message
    hits = ok(gateway.search(caller, "shout"))["hits"]
    assert "changing.shout" not in [hit["op"] for hit in hits]
    entry = registry.require("changing.mcp_tools")
    assert "shout" not in entry.description

    # Added again, it is an op again and the note is forgotten.
    ok(await gateway.execute(caller, "changing.add_tool", {"name": "shout"}))
    await until(lambda: "changing.shout" in registry, what="the tool back")
    assert registry.gone("changing.shout") is None


async def test_refresh_relists_a_server_that_never_tells(
    hub: McpHub, gateway: Gateway, tmp_path: Path
) -> None:
    await started(hub, gateway)
    registry, caller = gateway.registry, ctx(tmp_path)
    assert [change.any for change in await hub.refresh()] == [False]

    ok(await gateway.execute(caller, "changing.add_tool", {"name": "quiet", "notify": 0}))
    ok(await gateway.execute(caller, "changing.remove_tool", {"name": "ping", "notify": 0}))
    assert "changing.quiet" not in registry and "changing.ping" in registry  # nobody was told

    (change,) = await hub.refresh("changing")
    assert change.added == ["changing.quiet"] and change.removed == ["changing.ping"]
    assert "added changing.quiet; removed changing.ping" in change.line()
    assert "changing.quiet" in registry and "changing.ping" not in registry
    assert hub.relists.runs == 0


def engine_parts(data_dir: Path, workspace: Path, **servers: dict[str, Any]) -> EngineParts:
    settings = quiet_config(mcp_servers={"servers": servers}, approvals={"allow": ["changing.*"]})
    return build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False), settings)


async def test_disable_and_enable_at_runtime_and_the_choice_outlives_a_restart(
    data_dir: Path, workspace: Path
) -> None:
    parts = engine_parts(data_dir, workspace, changing=changing(), other=changing())
    engine = Engine.from_parts(parts)
    gateway, registry, caller = parts.gateway, parts.gateway.registry, ctx(workspace)
    try:
        await engine.start_tools()
        await until(lambda: "changing.ping" in registry and "other.ping" in registry)
        listed = ok(await gateway.execute(caller, "mcp.servers.list", {}))["servers"]
        assert [(s["server"], s["state"]) for s in listed] == [("changing", "up"), ("other", "up")]
        pid = parts.mcp.status_of("changing").pid
        assert pid is not None

        unknown = await gateway.execute(caller, "mcp.servers.disable", {"server": "nope"})
        assert unknown.error is not None and unknown.error.code == "NOT_FOUND"
        assert "the configured servers are: changing, other" in unknown.error.message

        done = ok(await gateway.execute(caller, "mcp.servers.disable", {"server": "changing"}))
        assert done["state"] == "disabled"
        await until(lambda: not Path(f"/proc/{pid}").exists(), what="its process gone")
        assert not [op for op in registry.list(domain="changing")]
        refused = await gateway.execute(caller, "changing.ping", {})
        assert refused.error is not None and refused.error.code == "CONFLICT"
        assert "'changing' is disabled; /mcp enable changing" in refused.error.message
        described = gateway.describe(caller, "changing")
        assert described.error is not None and "/mcp enable changing" in described.error.message
        hits = ok(gateway.search(caller, "ping pong"))["hits"]
        assert all(not hit["op"].startswith("changing.") for hit in hits)
        assert "other.ping" in registry  # the others are untouched
    finally:
        await engine.aclose()

    # A new engine on the same data: still disabled, never started.
    parts = engine_parts(data_dir, workspace, changing=changing(), other=changing())
    engine = Engine.from_parts(parts)
    registry = parts.gateway.registry
    try:
        await engine.start_tools()
        await until(lambda: "other.ping" in registry)
        assert parts.mcp.status_of("changing").state is ServerState.DISABLED
        assert "changing.ping" not in registry
        done = ok(await parts.gateway.execute(caller, "mcp.servers.enable", {"server": "changing"}))
        assert done["server"] == "changing"
        await until(lambda: "changing.ping" in registry, what="its ops back once listed")
        pong = ok(await parts.gateway.execute(caller, "changing.ping", {}))
        assert pong == {"result": "pong"}
        (change,) = ok(
            await parts.gateway.execute(caller, "mcp.servers.refresh", {"server": "changing"})
        )["changes"]
        assert change == {
            "server": "changing",
            "tools": 5,
            "added": [],
            "removed": [],
            "changed": [],
        }
    finally:
        await engine.aclose()


async def test_the_mcp_command_lists_disables_enables_and_refreshes(
    data_dir: Path, workspace: Path
) -> None:
    parts = engine_parts(data_dir, workspace, changing=changing())
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()

        async def said(line: str) -> str:
            reply = (await engine.submit(session.id, line))[1]
            return str(reply.payload["text"])

        assert "changing" in await said("/mcp")  # starts the servers, as a turn would
        await until(lambda: "changing.ping" in parts.gateway.registry)
        assert "changing     up, 5 tools" in await said("/mcp")
        assert "no MCP server named 'nope'; the configured servers are: changing" in await said(
            "/mcp disable nope"
        )
        assert "stopped, its ops removed" in await said("/mcp disable changing")
        listing = await said("/mcp")
        assert "disabled (/mcp enable changing)" in listing
        assert "disabled (/mcp enable changing)" in await said("/status")
        assert "changing: disabled" in await said("/mcp refresh")
        assert "Enabled the MCP server 'changing'" in await said("/mcp enable changing")
        await until(lambda: "changing.ping" in parts.gateway.registry)
        assert "changing: no change (5 tools)" in await said("/mcp refresh changing")
    finally:
        await engine.aclose()
