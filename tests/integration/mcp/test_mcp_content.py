"""External tools pass through whole: content, error meaning, names, allow/deny and roles.

Against a real stdio MCP server (tests/stubs/mcp_content_server.py, official SDK)
reached through a real gateway, as agents and MCP clients reach it.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from backend.config.mcp_servers import McpSettings
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.content import McpMedia, media_blocks
from backend.mcp.client.hub import McpHub
from backend.skills.builtin.catalog import build_gateway
from backend.skills.envelopes import Envelope
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext

STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_content_server.py"
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
    "60e6kgAAAABJRU5ErkJggg=="
)


def content_server(**extra: Any) -> McpSettings:
    body = {"command": [sys.executable, str(STUB)], "timeout_s": 10, **extra}
    return McpSettings.model_validate({"servers": {"content": body}})


@asynccontextmanager
async def gateway_over(settings: McpSettings, cwd: Path) -> AsyncIterator[tuple[McpHub, Gateway]]:
    """A gateway with the server's ops, once the server is up."""
    async with McpHub(settings, cwd=cwd) as hub:
        gateway = build_gateway()
        attach_skills(hub, gateway.registry)
        yield hub, gateway


def caller(workspace: Path, agent: str = "engineer") -> SkillContext:
    return SkillContext(session_id="s1", agent=agent, workspace=workspace, can_write=True)


@pytest.fixture
async def wired(tmp_path: Path) -> AsyncIterator[tuple[McpHub, Gateway]]:
    async with gateway_over(content_server(), tmp_path) as (hub, gateway):
        yield hub, gateway


async def run(gateway: Gateway, ctx: SkillContext, op: str, **args: Any) -> Envelope:
    return await gateway.execute(ctx, op, args, dry_run=False)


async def test_an_image_reaches_the_caller_whole_and_a_model_reads_what_it_is(
    wired: tuple[McpHub, Gateway], tmp_path: Path
) -> None:
    _hub, gateway = wired
    envelope = await run(gateway, caller(tmp_path), "content.snapshot")
    assert envelope.ok, envelope.error
    result = envelope.result
    assert result["text"] == "a 1x1 pixel"
    [image] = result["content"]
    assert isinstance(image, McpMedia)  # in process: the block exactly as the server sent it
    assert image.block["data"] == PIXEL and image.block["mimeType"] == "image/png"
    assert media_blocks(result) == [image.block]

    # What a model is given (the agent loop's tool result text): what came back, no bytes.
    seen = json.loads(envelope.to_json())
    [described] = seen["result"]["content"]
    size = len(base64.b64decode(PIXEL))
    assert described == {
        "type": "image",
        "mimeType": "image/png",
        "size_bytes": size,
        "note": f"an image/png image of {size} bytes was returned; it is not shown as text",
    }
    assert PIXEL not in envelope.to_json()


async def test_resources_and_links_pass_through(
    wired: tuple[McpHub, Gateway], tmp_path: Path
) -> None:
    _hub, gateway = wired
    envelope = await run(gateway, caller(tmp_path), "content.fetch_doc", name="readme")
    assert envelope.ok, envelope.error
    blocks = media_blocks(envelope.result)
    assert [b["type"] for b in blocks] == ["resource", "resource_link", "resource"]
    assert blocks[0]["resource"]["text"] == "# readme\nThe body."
    assert blocks[1]["uri"] == "docs://readme/history"
    assert blocks[2]["resource"]["blob"] == PIXEL

    seen = json.loads(envelope.to_json())["result"]["content"]
    assert seen[0]["resource"] == {
        "uri": "docs://readme",
        "mimeType": "text/markdown",
        "text": "# readme\nThe body.",
    }
    assert seen[1]["uri"] == "docs://readme/history" and seen[1]["name"] == "readme history"
    size = len(base64.b64decode(PIXEL))
    assert "blob" not in seen[2]["resource"] and seen[2]["resource"]["size_bytes"] == size
    assert f"image/png resource of {size} bytes" in seen[2]["resource"]["note"]


async def test_plain_results_keep_their_shape(
    wired: tuple[McpHub, Gateway], tmp_path: Path
) -> None:
    _hub, gateway = wired
    envelope = await run(gateway, caller(tmp_path), "content.get_weather", city="Oslo")
    assert envelope.ok and envelope.result == {"result": "sunny in Oslo"}


@pytest.mark.parametrize(
    ("op", "args", "code"),
    [
        ("content.read_file", {"path": "/etc/shadow"}, "ACCESS_DENIED"),
        ("content.read_file", {"path": "notes.missing"}, "NOT_FOUND"),
        ("content.fail", {"message": "something broke inside"}, "INTERNAL"),
        (
            "content.fail",
            {"message": "Invalid argument: depth must be a positive integer"},
            "VALIDATION_ERROR",
        ),
        ("content.rpc_fail", {"code": -32602, "message": "bad cursor"}, "VALIDATION_ERROR"),
        ("content.rpc_fail", {"code": -32002, "message": "no resource"}, "NOT_FOUND"),
        ("content.rpc_fail", {"code": -32603, "message": "Permission denied"}, "ACCESS_DENIED"),
        ("content.rpc_fail", {"code": -32050, "message": "the disk is on fire"}, "INTERNAL"),
        pytest.param(
            "content.rpc_fail",
            {"code": -32000, "message": "the disk is on fire"},
            "INTERNAL",
        ),
    ],
)
async def test_tool_errors_keep_their_meaning(
    wired: tuple[McpHub, Gateway], tmp_path: Path, op: str, args: dict[str, Any], code: str
) -> None:
    _hub, gateway = wired
    envelope = await run(gateway, caller(tmp_path), op, **args)
    assert not envelope.ok and envelope.error is not None
    assert envelope.error.code == code, envelope.error.message
    details = envelope.error.details
    assert details["server"] == "content" and details["reason"] == "mcp_tool_error"
    if op == "content.rpc_fail":
        assert details["server_code"] == args["code"]


async def test_odd_tool_names_answer_to_their_normalised_spelling(
    wired: tuple[McpHub, Gateway], tmp_path: Path
) -> None:
    hub, gateway = wired
    ctx = caller(tmp_path)
    ops = {tool.op: tool.name for tool in hub.tools()}
    assert ops["content.read_file"] == "read-file"  # the server's own name is what is sent
    assert ops["content.get_weather"] == "getWeather"

    page = gateway.describe(ctx, "content.read_file")
    assert page.ok and "allowed directory" in json.dumps(page.result)
    read = await run(gateway, ctx, "content.read_file", path="notes.txt")
    assert read.ok and read.result == {"result": "contents of notes.txt"}

    found = gateway.find(ctx, "read_file")  # the hidden tools are reached via their entry op
    assert found and found[0].op == "content.mcp_tools"
    entry = await run(gateway, ctx, "content.mcp_tools")
    assert {"content.read_file", "content.get_weather"} <= {g.op for g in entry.guidance}
    hits = [hit.op for hit in gateway.find(ctx, "get_weather")]
    assert "content.get_weather" in hits[:3]


async def test_allow_and_deny_globs_decide_which_tools_are_ops(tmp_path: Path) -> None:
    settings = content_server(allow=["read*", "get_*", "delete_*", "fetch-doc"], deny=["delete*"])
    async with gateway_over(settings, tmp_path) as (_hub, gateway):
        registry = gateway.registry
        offered = sorted(op for op in (s.op for s in registry) if op.startswith("content."))
        # read-file by its own name, getWeather by its op spelling; fetch_doc's glob names
        # neither spelling; delete_everything is allowed and denied: deny wins.
        assert offered == ["content.get_weather", "content.mcp_tools", "content.read_file"]
        entry = registry.require("content.mcp_tools")
        assert "delete" not in entry.description and "snapshot" not in entry.description
        ctx = caller(tmp_path)
        gone = await run(gateway, ctx, "content.delete_everything")
        assert gone.error is not None and gone.error.code == "NOT_FOUND"
        listed = await run(gateway, ctx, "content.mcp_tools")
        assert [t["op"] for t in listed.result["tools"]] == [
            "content.read_file",
            "content.get_weather",
        ]


async def test_a_server_offered_to_some_roles_refuses_the_others(tmp_path: Path) -> None:
    async with gateway_over(content_server(roles=["librarian"]), tmp_path) as (_hub, gateway):
        librarian, engineer = caller(tmp_path, "librarian"), caller(tmp_path, "engineer")
        weather = await run(gateway, librarian, "content.get_weather", city="Rome")
        assert weather.ok, weather.error
        for op, args in (("content.get_weather", {"city": "Rome"}), ("content.mcp_tools", {})):
            refused = await run(gateway, engineer, op, **args)
            assert refused.error is not None and refused.error.code == "ACCESS_DENIED"
            assert refused.error.details["reason"] == "role"  # the gateway refuses first
            assert "offered only to librarian" in refused.error.message
