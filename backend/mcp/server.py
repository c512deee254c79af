"""Sylk as an MCP server: the gateway verbs as tools, knowledge as resources.

Any MCP client (an IDE, another agent) sees four tools - ``search``,
``describe``, ``execute``, ``batch`` - which call the skill gateway, and the
resources of every :class:`ResourceProvider` (sessions and transcripts now).
``sylk mcp serve`` runs :func:`serve_stdio` on an open Engine.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from backend.errors import SylkError
from backend.mcp.ports import (
    BatchArgs,
    DescribeArgs,
    ExecuteArgs,
    GatewayPort,
    ResourceProvider,
    SearchArgs,
)
from backend.mcp.session_resources import SessionResources
from backend.skills.models import SkillContext

if TYPE_CHECKING:
    from backend.engine import Engine

log = logging.getLogger(__name__)

SERVER_NAME = "sylk"
INSTRUCTIONS = (
    "Sylk's operations are not listed one by one. Use `search` to find ops by what they "
    "do, `describe` to read an op's parameters, then `execute` it (or `batch` several). "
    "Results may carry guidance naming a next op. Sessions and their transcripts are "
    "resources under sylk://sessions."
)

Verb = Callable[[GatewayPort, SkillContext, Any], Awaitable[Any]]


async def _search(gateway: GatewayPort, ctx: SkillContext, a: SearchArgs) -> Any:
    return await gateway.search(ctx, a.query, limit=a.limit)


async def _describe(gateway: GatewayPort, ctx: SkillContext, a: DescribeArgs) -> Any:
    return await gateway.describe(ctx, a.op, detail=a.detail)


async def _execute(gateway: GatewayPort, ctx: SkillContext, a: ExecuteArgs) -> Any:
    return await gateway.execute(ctx, a.op, a.args, dry_run=a.dry_run)


async def _batch(gateway: GatewayPort, ctx: SkillContext, a: BatchArgs) -> Any:
    return await gateway.batch(ctx, [call.model_dump() for call in a.calls])


# name -> (arguments model, handler, read-only, description)
VERBS: dict[str, tuple[type[BaseModel], Verb, bool, str]] = {
    "search": (
        SearchArgs,
        _search,
        True,
        "Find Sylk operations by what they do. Returns op names with one-line summaries.",
    ),
    "describe": (
        DescribeArgs,
        _describe,
        True,
        "Show one operation: what it does, its parameters (JSON Schema), examples, policy.",
    ),
    "execute": (
        ExecuteArgs,
        _execute,
        False,
        "Run one operation with its arguments. Errors name the fix and the op to describe.",
    ),
    "batch": (
        BatchArgs,
        _batch,
        False,
        "Run several operations in order, in one round trip; each result is reported.",
    ),
}


def verb_tools() -> list[mcp_types.Tool]:
    return [
        mcp_types.Tool(
            name=name,
            description=description,
            input_schema=model.model_json_schema(),
            annotations=mcp_types.ToolAnnotations(
                read_only_hint=read_only, destructive_hint=False if read_only else None
            ),
        )
        for name, (model, _verb, read_only, description) in VERBS.items()
    ]


def _as_result(value: Any, *, is_error: bool = False) -> mcp_types.CallToolResult:
    data = to_jsonable_python(value, fallback=str)
    # Through protocol 2025-11-25 structured content must be an object.
    structured = data if isinstance(data, dict) else {"result": data}
    text = data if isinstance(data, str) else json.dumps(data, indent=1, ensure_ascii=False)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=text)],
        structured_content=structured,
        is_error=is_error,
    )


def _error(kind: str, message: str, hint: str = "") -> mcp_types.CallToolResult:
    body: dict[str, Any] = {"ok": False, "error": {"code": kind, "message": message}}
    if hint:
        body["error"]["help"] = hint
    return _as_result(body, is_error=True)


class SylkMcpServer:
    """Holds the gateway and resource providers and answers the SDK's requests."""

    def __init__(
        self,
        gateway: GatewayPort,
        context: SkillContext,
        providers: Sequence[ResourceProvider] = (),
    ) -> None:
        self.gateway = gateway
        self.context = context
        self.providers = list(providers)

    def build(self) -> Server[Any]:
        schemas = {tool.name: tool.input_schema for tool in verb_tools()}
        return Server(
            SERVER_NAME,
            version="0.1",
            title="Sylk",
            instructions=INSTRUCTIONS,
            get_tool_input_schema=schemas.get,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
        )

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=verb_tools())

    async def _call_tool(
        self, _ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        try:
            model, verb, _read_only, _description = VERBS[params.name]
        except KeyError:
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"unknown tool {params.name!r}; the tools are {', '.join(VERBS)}",
            ) from None
        try:
            args = model.model_validate(params.arguments or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            return _error("VALIDATION_ERROR", problems, f"see the input schema of {params.name!r}")
        ctx = SkillContext(
            session_id=self.context.session_id,
            agent=self.context.agent,
            workspace=self.context.workspace,
            scopes=self.context.scopes,
            can_write=self.context.can_write,
            trace_id=uuid.uuid4().hex[:16],
            extra=dict(self.context.extra),
        )
        try:
            return _as_result(await verb(self.gateway, ctx, args))
        except SylkError as exc:
            return _error(type(exc).__name__, exc.message, exc.help_hint)
        except Exception as exc:
            log.exception("MCP tool %r failed", params.name)
            return _error("INTERNAL", f"{type(exc).__name__}: {exc}", "see sylk.log")

    async def _list_resources(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        resources = [r for p in self.providers for r in await p.list_resources()]
        return mcp_types.ListResourcesResult(resources=resources)

    async def _list_templates(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        templates = [t for p in self.providers for t in p.templates()]
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def _read_resource(
        self, _ctx: ServerRequestContext[Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        uri = str(params.uri)
        for provider in self.providers:
            body = await provider.read(uri)
            if body is not None:
                contents = mcp_types.TextResourceContents(
                    uri=uri, text=body.text, mime_type=body.mime_type
                )
                return mcp_types.ReadResourceResult(contents=[contents])
        raise MCPError(mcp_types.INVALID_PARAMS, f"no resource {uri!r}", {"uri": uri})


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin/stdout until stdin closes."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_engine(
    engine: Engine, *, gateway: GatewayPort | None = None, can_write: bool = False
) -> None:
    """Serve ``engine`` over stdio until the client closes stdin. Without a
    gateway, the interim one serves the session ops."""
    from backend.mcp.interim_gateway import InterimGateway, session_skills

    context = SkillContext(
        session_id=f"mcp-{uuid.uuid4().hex[:12]}",
        agent="mcp-client",
        workspace=engine.config.workspace,
        can_write=can_write,
    )
    gateway = gateway or InterimGateway(session_skills(engine.archive))
    providers = [SessionResources(engine.archive)]
    await serve_stdio(SylkMcpServer(gateway, context, providers).build())
