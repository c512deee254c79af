"""Sylk as an MCP server: `sylk mcp serve` as a real process, and the server in-process,
both spoken to with the official SDK client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import ReadResourceResult, TextResourceContents
from pydantic import BaseModel, ConfigDict

from backend.config.mcp_servers import McpSettings
from backend.engine import Engine, EngineParts
from backend.errors import SylkError
from backend.mcp.client.as_skills import to_skills
from backend.mcp.client.hub import McpHub, ServerState
from backend.mcp.server.content.registry_resources import RegistryResources
from backend.mcp.server.content.session_resources import SessionResources
from backend.mcp.server.server import SylkMcpServer
from backend.messages import Message, MessageType
from backend.skills.envelopes import Envelope, ErrorCode, SkillError
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import OpKind, Skill, SkillContext
from backend.skills.registry import Registry
from backend.skills.registry import Resource as RegistryResource

ROOT = Path(__file__).resolve().parents[3]
STUB = ROOT / "tests" / "stubs" / "mcp_echo_server.py"


def text_of(read: ReadResourceResult) -> str:
    content = read.contents[0]
    assert isinstance(content, TextResourceContents)
    return content.text


def dirs(data_dir: Path, workspace: Path) -> list[str]:
    return ["--data-dir", str(data_dir), "--workspace", str(workspace)]


def sylk(*args: str, data_dir: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", *args, *dirs(data_dir, workspace)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )


async def test_sylk_mcp_serve_end_to_end(data_dir: Path, workspace: Path) -> None:
    made = sylk("sessions", "new", "alpha", data_dir=data_dir, workspace=workspace)
    assert made.returncode == 0, made.stderr
    sid = made.stdout.split("\t")[0]
    ran = sylk("run", "--session", "alpha", "/help", data_dir=data_dir, workspace=workspace)
    assert ran.returncode == 0, ran.stderr
    (workspace / "books").mkdir()
    (workspace / "books" / "ledger.py").write_text("\nclass Ledger:\n    pass\n")

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sylk_tui", "mcp", "serve", "--session", "alpha", *dirs(data_dir, workspace)],
        cwd=ROOT,
        env={k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
    )
    async with Client(server, cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"search", "describe", "execute", "batch"}
        assert tools["execute"].input_schema["required"] == ["op"]
        assert {"tags", "per_domain", "cursor"} <= set(tools["search"].input_schema["properties"])
        assert "if_none_match" in tools["describe"].input_schema["properties"]

        found = await client.call_tool("search", {"query": "list sessions"})
        assert not found.is_error
        assert "sessions.list" in [hit["op"] for hit in found.structured_content["result"]["hits"]]
        read = await client.call_tool(
            "execute", {"op": "sessions.transcript", "args": {"session_id": sid[:8], "limit": 1}}
        )
        assert [m["type"] for m in read.structured_content["result"]["messages"]] == [
            "SYSTEM_NOTICE"
        ]

        listed = await client.call_tool("execute", {"op": "sessions.list"})
        rows = listed.structured_content["result"]["sessions"]
        assert [(r["id"], r["name"], r["messages"]) for r in rows] == [(sid, "alpha", 2)]

        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        transcript_uri = f"sylk://sessions/{sid}/transcript"
        assert {"sylk://sessions", transcript_uri} <= resources
        fragment = "sylk://library/errors/retries-backoff"
        assert fragment in resources  # the Academic's library, one resource per fragment
        assert "jitter" in text_of(await client.read_resource(fragment))
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            "sylk://sessions/{session_id}/transcript",
            "sylk://library/{category}/{id}",
            "sylk://library/match{?query,category,maxTokens,mode}",
        ]

        # The Librarian answers from the workspace's code index.
        located = await client.call_tool(
            "execute",
            {"op": "librarian.code.search", "args": {"query": "Ledger", "symbol_type": "type"}},
        )
        definitions = located.structured_content["result"]["definitions"]
        assert [(d["path"], d["line"]) for d in definitions] == [("books/ledger.py", 2)]

        listing = json.loads(text_of(await client.read_resource("sylk://sessions")))
        assert listing["sessions"][0]["id"] == sid
        transcript = json.loads(text_of(await client.read_resource(transcript_uri)))
        assert transcript["session"]["name"] == "alpha"
        kinds = [(m["source"], m["type"]) for m in transcript["messages"]]
        assert kinds == [("user", "USER_INPUT"), ("sylk", "SYSTEM_NOTICE")]
        assert transcript["messages"][0]["payload"]["text"] == "/help"


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int
    b: int


def demo_registry(erased: list[str]) -> Registry:
    async def add(_ctx: SkillContext, p: AddParams) -> int:
        return p.a + p.b

    async def boom(_ctx: SkillContext, _p: NoParams) -> None:
        raise SkillError(ErrorCode.CONFLICT, "the demo went boom", help_path="demo.add")

    async def erase(ctx: SkillContext, _p: NoParams) -> str:
        erased.append(ctx.session_id)
        return "erased"

    registry = Registry()
    registry.register_all(
        [
            Skill(op="demo.add", agent="librarian", description="Add two integers.",
                  params=AddParams, handler=add),
            Skill(op="demo.boom", agent="librarian", description="Always conflicts.",
                  params=NoParams, handler=boom),
            Skill(op="demo.erase", agent="librarian", description="Erase everything.",
                  params=NoParams, handler=erase, kind=OpKind.WRITE, destructive=True),
        ]
    )  # fmt: skip
    registry.add_resource(
        RegistryResource(
            uri="demo.add/two-and-two", op="demo.add", name="four", args={"a": 2, "b": 2}
        )
    )
    return registry


async def test_real_gateway_verbs_and_resources_in_process(
    engine: Engine, engine_parts: EngineParts
) -> None:
    session = await engine.create_session("beta")
    await engine_parts.sessions.append(
        Message[dict[str, Any]](
            session_id=session.id,
            source="user",
            type=MessageType.USER_INPUT,
            payload={"text": "hello"},
        )
    )
    erased: list[str] = []
    gateway = Gateway(demo_registry(erased))
    ctx = SkillContext(
        session_id="mcp-test", agent="mcp-client", workspace=engine.workspace, can_write=True
    )
    providers = [SessionResources(engine.archive), RegistryResources(gateway, ctx)]
    async with Client(SylkMcpServer(gateway, ctx, providers).build(), cache=None) as client:
        found = await client.call_tool("search", {"query": "add integers"})
        assert found.structured_content["result"]["hits"][0]["op"] == "demo.add"
        doc = await client.call_tool("describe", {"op": "demo.add", "level": "schema"})
        assert doc.structured_content["result"]["input_schema"]["required"] == ["a", "b"]
        added = await client.call_tool("execute", {"op": "demo.add", "args": {"a": 2, "b": 3}})
        assert not added.is_error and added.structured_content["result"] == 5

        preview = await client.call_tool("execute", {"op": "demo.erase"})
        assert preview.structured_content["meta"]["dry_run"] is True and erased == []
        applied = await client.call_tool("execute", {"op": "demo.erase", "dry_run": False})
        assert applied.structured_content["result"] == "erased" and erased == ["mcp-test"]

        boom = await client.call_tool("execute", {"op": "demo.boom"})
        assert boom.is_error and boom.structured_content["error"]["code"] == "CONFLICT"
        invalid = await client.call_tool("execute", {"op": "demo.add", "args": {"a": "x"}})
        assert invalid.is_error
        assert invalid.structured_content["error"]["code"] == "VALIDATION_ERROR"
        bad = await client.call_tool("describe", {"op": "demo.add", "level": "everything"})
        assert bad.is_error and bad.structured_content["error"]["code"] == "VALIDATION_ERROR"
        both = await client.call_tool(
            "batch",
            {"calls": [{"verb": "execute", "op": "demo.add", "args": {"a": 1, "b": 1}},
                       {"verb": "describe", "op": "nothing.here"}]},
        )  # fmt: skip
        results = both.structured_content["result"]["results"]
        assert [r["ok"] for r in results] == [True, False] and results[0]["result"] == 2
        # A chain over MCP: the op to run is the first hit of the search before it.
        chained = await client.call_tool(
            "batch",
            {"chain": True,
             "calls": [{"verb": "search", "query": "add integers", "limit": 1},
                       {"verb": "execute", "op": {"$ref": "0.result.hits.0.op"},
                        "args": {"a": 40, "b": 2}}]},
        )  # fmt: skip
        assert [r["result"] for r in chained.structured_content["result"]["results"]][1] == 42
        with pytest.raises(MCPError, match="unknown tool 'help'"):
            await client.call_tool("help", {})

        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        transcript = f"sylk://sessions/{session.id}/transcript"
        assert uris == {"sylk://sessions", transcript, "sylk://ops/demo.add/two-and-two"}
        body = json.loads(text_of(await client.read_resource(transcript)))
        assert [m["payload"]["text"] for m in body["messages"]] == ["hello"]
        assert (
            json.loads(text_of(await client.read_resource("sylk://ops/demo.add/two-and-two"))) == 4
        )
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("sylk://sessions/nope/transcript")


class BrokenGateway(Gateway):
    def search(
        self, ctx: SkillContext, query: str, domain: str | None = None, limit: int = 10, **_: Any
    ) -> Envelope:
        if query == "typed":
            raise SylkError("the index is rebuilding", help_hint="try again in a moment")
        raise RuntimeError("index corrupt")


async def test_gateway_exceptions_become_tool_errors(tmp_path: Path) -> None:
    ctx = SkillContext(session_id="mcp-test", agent="mcp-client", workspace=tmp_path)
    server = SylkMcpServer(BrokenGateway(Registry()), ctx).build()
    async with Client(server, cache=None) as client:
        typed = await client.call_tool("search", {"query": "typed"})
        assert typed.is_error and typed.structured_content["error"] == {
            "code": "INTERNAL",  # a SylkError of no kind; a typed one keeps its code
            "message": "the index is rebuilding (try again in a moment)",
            "details": {"reason": "SylkError"},
            "help_path": "search",
        }
        crashed = await client.call_tool("search", {"query": "other"})
        assert crashed.is_error and crashed.structured_content["error"]["code"] == "INTERNAL"


async def test_external_mcp_tools_reach_clients_through_the_gateway(tmp_path: Path) -> None:
    echo = {"command": [sys.executable, str(STUB)]}
    config = McpSettings.model_validate({"servers": {"echo": echo}})
    async with McpHub(config, cwd=tmp_path) as hub:
        registry = Registry()
        registry.register_all(to_skills(hub))
        ctx = SkillContext(
            session_id="mcp-test", agent="mcp-client", workspace=tmp_path, can_write=True
        )
        server = SylkMcpServer(Gateway(registry), ctx).build()
        async with Client(server, cache=None) as client:
            found = await client.call_tool("search", {"query": "reverse text"})
            ops = [hit["op"] for hit in found.structured_content["result"]["hits"]]
            assert ops[0] == "echo.mcp_tools" and "echo.reverse" not in ops  # hidden for now
            entry = await client.call_tool("execute", {"op": "echo.mcp_tools"})
            unveiled = [g["op"] for g in entry.structured_content["guidance"]]
            assert "echo.reverse" in unveiled
            again = await client.call_tool("search", {"query": "reverse text"})
            ops = [hit["op"] for hit in again.structured_content["result"]["hits"]]
            assert "echo.reverse" in ops[:3]  # unveiled for this session
            doc = await client.call_tool("describe", {"op": "echo.reverse", "level": "schema"})
            assert doc.structured_content["result"]["input_schema"]["required"] == ["text"]
            done = await client.call_tool(
                "execute", {"op": "echo.reverse", "args": {"text": "gateway"}}
            )
            assert done.structured_content["result"] == {"result": "yawetag"}
            invalid = await client.call_tool("execute", {"op": "echo.reverse", "args": {}})
            assert invalid.structured_content["error"]["code"] == "VALIDATION_ERROR"
            # The server marks crash destructive: the gateway previews it instead of running it.
            preview = await client.call_tool("execute", {"op": "echo.crash"})
            assert preview.structured_content["meta"]["dry_run"] is True
            failed = await client.call_tool(
                "execute", {"op": "echo.fail", "args": {"message": "x"}}
            )
            error = failed.structured_content["error"]
            assert failed.is_error and error["code"] == "INTERNAL"
            assert error["details"] == {"server": "echo", "reason": "mcp_tool_error"}
            assert "tool 'fail' on server 'echo' failed" in error["message"]
        assert hub.status()[0].state is ServerState.UP


def test_serve_exits_cleanly_when_stdin_closes(data_dir: Path, workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "mcp", "serve", *dirs(data_dir, workspace)],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # nothing but protocol ever reaches stdout
