"""What ``sylk mcp serve`` answers, spoken to with the official SDK client: a client with
no bound session gets a real one, every tool's error is the gateway's envelope, a cursor
the server never issued is invalid params, each resource is listed once, and an MCP
server's domain is described with counts that agree with ``describe``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Implementation, TextResourceContents

from backend.config.mcp_servers import McpSettings
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.errors import SessionNotFoundError, SylkError
from backend.mcp.client.as_skills import to_skills
from backend.mcp.client.hub import McpHub
from backend.mcp.server.callers import fixed
from backend.mcp.server.client_sessions import fresh_caller
from backend.mcp.server.content.instructions import domain_summaries, render
from backend.mcp.server.content.server_domains import describe_server_domains
from backend.mcp.server.server import SylkMcpServer, caller_context
from backend.skills.envelopes import Envelope
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from backend.skills.registry import Registry

ROOT = Path(__file__).resolve().parents[3]
STUB = ROOT / "tests" / "stubs" / "mcp_echo_server.py"
HOSTILE_NAME = "Inspector\x1b[31m \u202eevil\n\tclient" + "x" * 200


def serve_params(data_dir: Path, workspace: Path, *flags: str) -> StdioServerParameters:
    dirs = ["--data-dir", str(data_dir), "--workspace", str(workspace)]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sylk_tui", "mcp", "serve", *dirs, *flags],
        cwd=ROOT,
        env={k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
    )


async def execute(client: Client, op: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool("execute", {"op": op, "args": args})
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def sessions_in_archive(data_dir: Path, workspace: Path) -> dict[str, str]:
    """id -> name of every session the archive holds, read by a fresh engine's parts."""
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    try:
        return {s.id: s.name for s in parts.archive.load_sessions()}
    finally:
        parts.archive.close()


@pytest.mark.slow
async def test_a_client_with_no_session_gets_one_of_its_own_named_after_it(
    data_dir: Path, workspace: Path
) -> None:
    flags = ("--allow-write", "--approval", "auto-edit")
    info = Implementation(name=HOSTILE_NAME, version="1")
    async with Client(
        serve_params(data_dir, workspace, *flags), cache=None, client_info=info
    ) as client:
        assert "1 session at sylk://sessions" in (client.instructions or "")
        written = await execute(client, "engineer.file.write", path="notes.txt", content="hi\n")
        assert written["ok"], written
        context = await execute(client, "session.context.get")
        assert context["ok"], context  # the session exists, so ops that look it up work
        stored = await execute(
            client, "archivalist.chronicle.store", content="served", category="insight"
        )
        mine = stored["result"]["entry"]["session_id"]
        listed = await execute(client, "sessions.list")
        assert [s.get("id") for s in listed["result"]["sessions"]] == [mine], listed
    assert (workspace / "notes.txt").read_text() == "hi\n"
    async with Client(serve_params(data_dir, workspace), cache=None) as second:
        other = await execute(second, "archivalist.chronicle.query", search_text="served")
        assert other["result"]["entries"] == []  # a new run is a new session: not mine

    names = sessions_in_archive(data_dir, workspace)
    # Control and bidi characters dropped, whitespace collapsed, 48 characters at most.
    assert names[mine] == "mcp: " + ("Inspector[31m evil client" + "x" * 200)[:48]
    assert len(names) == 2 and all(name.startswith("mcp: ") for name in names.values())
    log = (data_dir / "sylk.log").read_text()
    assert "never retrieved" not in log and "SessionNotFoundError" not in log


async def test_first_requests_at_once_make_one_session(
    engine: Engine, engine_parts: EngineParts
) -> None:
    gateway = engine_parts.gateway
    caller = fresh_caller(engine, gateway, cross_session=False, can_write=False)
    placeholder = caller.context
    server = SylkMcpServer(gateway, placeholder, callers=fixed(caller)).build()
    async with Client(server, cache=None) as client:
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(client.list_resources)
        made = caller.pending.opened if caller.pending else None
        assert made is not None and made.context.session_id != placeholder.session_id
        assert engine.get_session(made.context.session_id).name == "mcp: mcp"
    assert [s.name for s in engine.list_sessions()] == ["mcp: mcp"]


class RaisingGateway(Gateway):
    def search(self, ctx: SkillContext, query: str, *_: Any, **__: Any) -> Envelope:
        if query == "typed":
            raise SessionNotFoundError("gone")
        if query == "plain":
            raise SylkError("the index is rebuilding", help_hint="try again in a moment")
        raise RuntimeError("index corrupt")


def assert_envelope(result: Any, op: str, code: str) -> dict[str, Any]:
    body = result.structured_content
    assert result.is_error and body["ok"] is False and body["op"] == op
    assert body["meta"]["trace_id"].startswith("tr_")
    assert body["error"]["code"] == code and "help_path" in body["error"]
    error: dict[str, Any] = body["error"]
    return error


async def test_every_tool_errs_in_the_execute_envelope(tmp_path: Path) -> None:
    ctx = SkillContext(session_id="mcp-test", agent="mcp-client", workspace=tmp_path)
    server = SylkMcpServer(RaisingGateway(Registry()), ctx).build()
    async with Client(server, cache=None) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search", {"query": ""}),
            ("search", {"query": "x", "limit": 0, "colour": "red"}),
            ("describe", {"level": "everything"}),
            ("batch", {"calls": []}),
            ("execute", {}),
        ]
        for tool, args in calls:
            error = assert_envelope(await client.call_tool(tool, args), tool, "VALIDATION_ERROR")
            assert error["help_path"] == tool and error["details"]["field_errors"], (tool, error)
            assert error["message"].startswith(f"invalid arguments for {tool}")
        unknown = await client.call_tool("search", {"query": "x", "colour": "red"})
        fields = assert_envelope(unknown, "search", "VALIDATION_ERROR")["details"]
        assert fields["field_errors"][0]["field"] == "colour"

        typed = assert_envelope(
            await client.call_tool("search", {"query": "typed"}), "search", "NOT_FOUND"
        )
        assert typed["details"]["reason"] == "SessionNotFoundError"
        plain = assert_envelope(
            await client.call_tool("search", {"query": "plain"}), "search", "INTERNAL"
        )
        assert plain["message"] == "the index is rebuilding (try again in a moment)"
        crashed = assert_envelope(
            await client.call_tool("search", {"query": "x"}), "search", "INTERNAL"
        )
        assert crashed["message"] == "RuntimeError: index corrupt"


async def test_a_cursor_never_issued_is_invalid_params(
    engine: Engine, engine_parts: EngineParts
) -> None:
    ctx = caller_context(engine)
    server = SylkMcpServer(engine_parts.gateway, ctx).build()
    async with Client(server, cache=None) as client:
        for listing in (
            client.list_tools,
            client.list_resources,
            client.list_resource_templates,
            client.list_prompts,
        ):
            with pytest.raises(MCPError) as raised:
                await listing(cursor="not-a-cursor")
            assert raised.value.error.code == INVALID_PARAMS, listing
        assert len((await client.list_tools()).tools) == 4  # no cursor: the whole list


async def test_each_resource_is_listed_once_and_a_fragment_titled_once(
    engine: Engine, engine_parts: EngineParts
) -> None:
    caller = fresh_caller(engine, engine_parts.gateway, cross_session=False, can_write=False)
    server = SylkMcpServer(engine_parts.gateway, caller.context, callers=fixed(caller)).build()
    async with Client(server, cache=None) as client:
        resources = (await client.list_resources()).resources
        uris = [str(r.uri) for r in resources]
        assert len(uris) == len(set(uris))
        assert not [u for u in uris if u.startswith("sylk://ops/sylk://")]
        fragments = [r for r in resources if str(r.uri).startswith("sylk://library/")]
        assert fragments and all(r.mime_type == "text/markdown" for r in fragments)
        for fragment in fragments:
            content = (await client.read_resource(str(fragment.uri))).contents[0]
            assert isinstance(content, TextResourceContents)
            title = fragment.title or ""
            assert (
                content.text.startswith(f"# {title}\n") and content.text.count(f"# {title}\n") == 1
            )


async def test_an_mcp_server_domain_is_described_and_counted_as_describe_does(
    tmp_path: Path,
) -> None:
    echo = {"command": [sys.executable, str(STUB)]}
    config = McpSettings.model_validate({"servers": {"echo": echo}})
    async with McpHub(config, cwd=tmp_path) as hub:
        registry = Registry()
        stop = describe_server_domains(registry)
        registry.register_all(to_skills(hub))  # registered after: the listener describes it
        stop()
        gateway = Gateway(registry)
        ctx = SkillContext(
            session_id="mcp-test", agent="mcp-client", workspace=tmp_path, can_write=True
        )
        rows = domain_summaries(registry, ctx, gateway.offered)
        server = SylkMcpServer(gateway, ctx).build()
        async with Client(server, cache=None) as client:
            root = (await client.call_tool("describe", {"op": ""})).structured_content
            [domain] = root["result"]["domains"]
            assert domain["description"].startswith("MCP server echo: ")
            [row] = rows
            assert (row.name, row.ops, row.label) == ("echo", domain["ops"], "MCP server echo")
            tools = len([t for t in hub.tools() if t.server == "echo"])
            assert row.hidden == tools and row.ops == 1
            text = render(rows, sessions=0, fragments=0)
            assert f"echo 1 +{tools} hidden (MCP server echo)" in text
            assert f"Sylk's {tools + 1} ops" in text and "entry op" in text
