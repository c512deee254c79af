"""Sylk as an MCP server: the gateway verbs as tools, knowledge as resources.

Any MCP client (an IDE, another agent) sees four tools - ``search``,
``describe``, ``execute``, ``batch`` - which call the skill gateway, and the
resources of every :class:`ResourceProvider`: sessions and transcripts, and
whatever skill owners register as registry resources. One client connection is
one caller (:mod:`backend.mcp.server.callers`): its context (session id, workspace,
scopes, write permission) is fixed when it connects, so ops unveiled by guidance
stay unveiled for that client. By default the caller is a fresh session of its
own; bound to an existing session it acts in that session's workspace and private
chronicle; the cross-session scope lets it read every session's history (what it
stores still lands in its own session).
A few prompts (:mod:`backend.mcp.server.content.prompts`) package what Sylk knows as ready
requests, and the instructions sent at initialize (:mod:`backend.mcp.server.content.instructions`)
name the domains within the caller's reach, with counts (filled at each initialize by
``instructions_for`` when given, within the request's token grant). ``sylk mcp serve``
runs :func:`~backend.mcp.server.engine_serving.serve_engine` on an open Engine, over
stdio or HTTP (:mod:`backend.mcp.server.http_transport`), until the client leaves or a
stop signal (:mod:`backend.mcp.server.shutdown`) arrives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from backend.errors import SylkError
from backend.mcp.server.auth.grants import CURRENT_GRANT
from backend.mcp.server.callers import Caller, CallerLookup, fixed
from backend.mcp.server.client_sessions import caller_context, client_name, engine_caller
from backend.mcp.server.content.ports import ResourceProvider
from backend.mcp.server.content.prompts import PromptError, SylkPrompts
from backend.mcp.server.content.verb_replies import as_result, invalid_arguments, raised
from backend.mcp.server.redacted_replies import RedactedReplies
from backend.redaction import Redactor
from backend.skills.envelopes import Envelope, new_trace_id
from backend.skills.gateway.verbs import (
    BatchArgs,
    DescribeArgs,
    ExecuteArgs,
    SearchArgs,
    Verbs,
    call_verb,
)
from backend.skills.models import OpBound, SkillContext

log = logging.getLogger(__name__)

SERVER_NAME = "sylk"
# Without an engine (a server built in-process) there is nothing to count.
INSTRUCTIONS = (
    "Sylk's operations are not listed one by one. Use `search` to find ops by what they "
    "do, `describe` to read an op's parameters, then `execute` it (or `batch` several). "
    "Results may carry guidance naming a next op. Sessions and their transcripts are "
    "resources under sylk://sessions, best-practice fragments under sylk://library (read "
    "sylk://library/match?query=...&maxTokens=... for the ones matching a query), other "
    "indexed content under sylk://ops. The prompts best-practice, where-is and briefing "
    "come filled with what Sylk knows."
)

Verb = Callable[[Verbs, SkillContext, Any], Awaitable[Envelope]]
InstructionsFor = Callable[[OpBound | None], Awaitable[str]]
# The requests whose result carries the instructions: the handshake era's and the modern one's.
INSTRUCTED = frozenset({"initialize", "server/discover"})
__all__ = ["SylkMcpServer", "caller_context", "engine_caller", "verb_tools"]


async def _batch(gateway: Verbs, ctx: SkillContext, a: BatchArgs) -> Envelope:
    calls = [call.model_dump(exclude_unset=True, by_alias=True) for call in a.calls]
    return await gateway.batch(ctx, calls, chain=a.chain)


# name -> (arguments model, handler, read-only, description)
VERBS: dict[str, tuple[type[BaseModel], Verb, bool, str]] = {
    "search": (
        SearchArgs,
        call_verb,
        True,
        "Find Sylk operations by meaning. Returns ranked ops with one-line summaries.",
    ),
    "describe": (
        DescribeArgs,
        call_verb,
        True,
        "Help for an op (level summary|schema|full) or, for a prefix, every op in that group; "
        "'' lists the domains.",
    ),
    "execute": (
        ExecuteArgs,
        call_verb,
        False,
        "Run an op with args. Returns {ok, result, guidance, meta} or {ok: false, error} "
        "with a help path. Guidance names the next ops to use.",
    ),
    "batch": (
        BatchArgs,
        _batch,
        False,
        "Several search/describe/execute calls in one round trip, results in order. "
        "chain=true runs them in order as steps: a step's args may use an earlier step's "
        'result ({"$ref": "0.result.hits.0.op"}) and the first error stops the chain.',
    ),
}


def whole_list(params: mcp_types.PaginatedRequestParams | None) -> None:
    """Every list is answered in one page and no cursor is ever issued, so a cursor is
    one this server did not give: invalid params (-32602), as the spec has it."""
    if params is not None and params.cursor is not None:
        raise MCPError(
            mcp_types.INVALID_PARAMS,
            "invalid cursor: this server lists everything in one page and issues no cursor",
            {"cursor": params.cursor},
        )


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


class SylkMcpServer:
    """Holds the gateway and answers the SDK's requests for the caller each comes from:
    ``context``, ``providers`` and ``prompts`` by default, or whom ``callers`` names.
    With a ``redactor``, every reply and error is redacted on its way out. With
    ``instructions_for``, initialize answers with its text for the request's grant
    instead of ``instructions``."""

    def __init__(
        self,
        gateway: Verbs,
        context: SkillContext,
        providers: Sequence[ResourceProvider] = (),
        prompts: SylkPrompts | None = None,
        *,
        instructions: str = INSTRUCTIONS,
        callers: CallerLookup | None = None,
        redactor: Redactor | None = None,
        instructions_for: InstructionsFor | None = None,
    ) -> None:
        self.gateway = gateway
        self.redactor = redactor
        self.context = context
        self.providers = list(providers)
        self.prompts = prompts
        self.instructions = instructions
        self.instructions_for = instructions_for
        default = fixed(Caller(context, tuple(providers), prompts))
        self.caller = default if callers is None else callers

    def build(self) -> Server[Any]:
        schemas = {tool.name: tool.input_schema for tool in verb_tools()}
        server: Server[Any] = Server(
            SERVER_NAME,
            version="0.1",
            title="Sylk",
            instructions=self.instructions,
            get_tool_input_schema=schemas.get,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        if self.redactor:  # innermost, so the SDK's tracing sees only redacted text too
            server.middleware.append(RedactedReplies(self.redactor))
        if self.instructions_for is not None:  # inside redaction: its text is redacted too
            server.middleware.append(self._fill_instructions)
        return server

    async def _fill_instructions(
        self, ctx: ServerRequestContext[Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in INSTRUCTED and self.instructions_for and isinstance(result, dict):
            result["instructions"] = await self.instructions_for(CURRENT_GRANT.get())
        return result

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        whole_list(params)
        return mcp_types.ListToolsResult(tools=verb_tools())

    async def _call_tool(
        self, request: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        try:
            model, verb, _read_only, _description = VERBS[params.name]
        except KeyError:
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                f"unknown tool {params.name!r}; the tools are {', '.join(VERBS)}",
            ) from None
        trace = new_trace_id()
        arguments = params.arguments or {}
        try:
            args = model.model_validate(arguments)
        except ValidationError as exc:
            return invalid_arguments(params.name, model, arguments, exc, trace)
        try:
            caller = (await self._caller(request)).context
            ctx = dataclasses.replace(caller, trace_id=trace, op_bound=CURRENT_GRANT.get())
            return as_result(await verb(self.gateway, ctx, args))
        except SylkError as exc:
            return raised(params.name, exc, trace)
        except Exception as exc:
            log.exception("MCP tool %r failed", params.name)
            return raised(params.name, exc, trace)

    async def _caller(self, request: ServerRequestContext[Any]) -> Caller:
        """Whom ``request`` comes from; a client with no session yet gets one now."""
        caller = self.caller(request)
        if caller.pending is None:
            return caller
        return await caller.pending.caller(client_name(request))

    async def _list_resources(
        self, request: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        whole_list(params)
        providers = (await self._caller(request)).providers
        listed: dict[str, mcp_types.Resource] = {}
        for provider in providers:  # a URI two providers know is the first one's
            for resource in await provider.list_resources():
                listed.setdefault(str(resource.uri), resource)
        return mcp_types.ListResourcesResult(resources=list(listed.values()))

    async def _list_templates(
        self, request: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        whole_list(params)
        templates = [t for p in (await self._caller(request)).providers for t in p.templates()]
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def _read_resource(
        self, request: ServerRequestContext[Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        uri = str(params.uri)
        for provider in (await self._caller(request)).providers:
            try:
                body = await provider.read(uri)
            except SylkError as exc:  # bad template parameters and the like
                raise MCPError(mcp_types.INVALID_PARAMS, str(exc), {"uri": uri}) from None
            if body is not None:
                contents = mcp_types.TextResourceContents(
                    uri=uri, text=body.text, mime_type=body.mime_type
                )
                return mcp_types.ReadResourceResult(contents=[contents])
        raise MCPError(mcp_types.INVALID_PARAMS, f"no resource {uri!r}", {"uri": uri})

    async def _list_prompts(
        self, request: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListPromptsResult:
        whole_list(params)
        own = (await self._caller(request)).prompts
        prompts = await asyncio.to_thread(own.prompts) if own else []
        return mcp_types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, request: ServerRequestContext[Any], params: mcp_types.GetPromptRequestParams
    ) -> mcp_types.GetPromptResult:
        own = (await self._caller(request)).prompts
        if own is None:
            raise MCPError(mcp_types.INVALID_PARAMS, f"no prompt named {params.name!r}")
        try:
            return await own.get(params.name, params.arguments)
        except PromptError as exc:
            data = {"prompt": exc.prompt, "argument": exc.argument}
            raise MCPError(mcp_types.INVALID_PARAMS, str(exc), data) from None
