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
A few prompts (:mod:`backend.mcp.server.prompts`) package what Sylk knows as ready
requests, and the instructions sent at initialize (:mod:`backend.mcp.server.instructions`)
name the domains within the caller's reach, with counts. ``sylk mcp serve`` runs
:func:`serve_engine` on an open Engine, over stdio or HTTP
(:mod:`backend.mcp.server.http_transport`), until the client leaves or a stop signal
(:mod:`backend.mcp.server.shutdown`) arrives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from backend.config.approvals import ApprovalMode
from backend.errors import SylkError
from backend.mcp.server.callers import Caller, CallerLookup, SessionCallers, fixed
from backend.mcp.server.instructions import server_instructions
from backend.mcp.server.library_resources import LibraryResources
from backend.mcp.server.ports import ResourceProvider
from backend.mcp.server.prompts import PromptError, SylkPrompts
from backend.mcp.server.redacted_replies import RedactedReplies
from backend.mcp.server.registry_resources import RegistryResources
from backend.mcp.server.session_resources import SessionResources
from backend.mcp.server.stdio_transport import serve_stdio
from backend.redaction import Redactor
from backend.skills.builtin.archivalist import CROSS_SCOPE
from backend.skills.envelopes import Envelope, new_trace_id
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.verbs import (
    BatchArgs,
    DescribeArgs,
    ExecuteArgs,
    SearchArgs,
    Verbs,
    call_verb,
)
from backend.skills.models import SkillContext

if TYPE_CHECKING:
    from backend.engine import Engine
    from backend.mcp.server.auth import TokenAuth
    from backend.mcp.server.http_sessions import SessionLimits
    from backend.mcp.server.http_transport import HttpEndpoint

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


async def _batch(gateway: Verbs, ctx: SkillContext, a: BatchArgs) -> Envelope:
    return await gateway.batch(ctx, [call.model_dump(exclude_unset=True) for call in a.calls])


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
        "Several search/describe/execute calls in one round trip, results in order.",
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
    if isinstance(value, Envelope):
        data: Any = value.to_model()
        is_error = is_error or not value.ok
    else:
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
    """Holds the gateway and answers the SDK's requests for the caller each comes from:
    ``context``, ``providers`` and ``prompts`` by default, or whom ``callers`` names.
    With a ``redactor``, every reply and error is redacted on its way out."""

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
    ) -> None:
        self.gateway = gateway
        self.redactor = redactor
        self.context = context
        self.providers = list(providers)
        self.prompts = prompts
        self.instructions = instructions
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
        return server

    async def _list_tools(
        self, _ctx: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
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
        try:
            args = model.model_validate(params.arguments or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            return _error("VALIDATION_ERROR", problems, f"see the input schema of {params.name!r}")
        ctx = dataclasses.replace(self.caller(request).context, trace_id=new_trace_id())
        try:
            return _as_result(await verb(self.gateway, ctx, args))
        except SylkError as exc:
            return _error(type(exc).__name__, exc.message, exc.help_hint)
        except Exception as exc:
            log.exception("MCP tool %r failed", params.name)
            return _error("INTERNAL", f"{type(exc).__name__}: {exc}", "see sylk.log")

    async def _list_resources(
        self, request: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        providers = self.caller(request).providers
        resources = [r for p in providers for r in await p.list_resources()]
        return mcp_types.ListResourcesResult(resources=resources)

    async def _list_templates(
        self, request: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        templates = [t for p in self.caller(request).providers for t in p.templates()]
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def _read_resource(
        self, request: ServerRequestContext[Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        uri = str(params.uri)
        for provider in self.caller(request).providers:
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
        self, request: ServerRequestContext[Any], _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListPromptsResult:
        own = self.caller(request).prompts
        prompts = await asyncio.to_thread(own.prompts) if own else []
        return mcp_types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, request: ServerRequestContext[Any], params: mcp_types.GetPromptRequestParams
    ) -> mcp_types.GetPromptResult:
        own = self.caller(request).prompts
        if own is None:
            raise MCPError(mcp_types.INVALID_PARAMS, f"no prompt named {params.name!r}")
        try:
            return await own.get(params.name, params.arguments)
        except PromptError as exc:
            data = {"prompt": exc.prompt, "argument": exc.argument}
            raise MCPError(mcp_types.INVALID_PARAMS, str(exc), data) from None


def caller_context(
    engine: Engine,
    *,
    session: str | None = None,
    cross_session: bool = False,
    can_write: bool = False,
) -> SkillContext:
    """Who the client is: a fresh session of its own, or the session ``session`` names
    (id, unique id prefix, name or number; SessionNotFoundError or
    AmbiguousSessionError otherwise), acting in that session's workspace."""
    if session is None:
        session_id, workspace = f"mcp-{uuid.uuid4().hex[:12]}", engine.workspace
    else:
        bound = engine.get_session(session)
        session_id, workspace = bound.id, Path(bound.workspace)
    return SkillContext(
        session_id=session_id,
        agent="mcp-client",
        workspace=workspace,
        scopes=frozenset({CROSS_SCOPE}) if cross_session else frozenset(),
        can_write=can_write,
        confinement=engine.confinement(workspace),
        # The client's rights fix its approval mode: without write rights read-only, with
        # them the engine's (the config's or --approval); it can answer no question.
        approval=engine.approval_mode() if can_write else ApprovalMode.READ_ONLY,
    )


def engine_caller(engine: Engine, gateway: Gateway, context: SkillContext) -> Caller:
    """A caller with ``context`` and what it reads of ``engine``: its sessions, the
    library, the registry's resources, and prompts filled from them."""
    providers = (
        SessionResources(engine.archive, context),
        LibraryResources(engine.library),
        RegistryResources(gateway, context),
    )
    return Caller(context, providers, SylkPrompts(gateway, context, engine.library))


async def serve_engine(
    engine: Engine,
    *,
    gateway: Gateway | None = None,
    can_write: bool = False,
    session: str | None = None,
    cross_session: bool = False,
    http: HttpEndpoint | None = None,
    limits: SessionLimits | None = None,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
    auth: TokenAuth | None = None,
) -> bool:
    """Serve ``engine`` over stdio until the client closes stdin, or over ``http`` (each
    client its own caller, its session within ``limits``) until ``stop`` is set; see
    :func:`caller_context` for ``session`` and ``cross_session``. True if ``stop`` ended
    it. ``on_listening`` hears the URL once the HTTP socket listens. The engine stays
    open: closing it is the caller's."""

    context = caller_context(
        engine, session=session, cross_session=cross_session, can_write=can_write
    )  # an unknown --session fails here, before anything starts
    if http is not None:
        from backend.mcp.server import http_sessions, http_transport  # uvicorn: only for HTTP

        sock = http_transport.listen(http)  # a taken port fails before the tools start
    if gateway is None:
        gateway = await engine.tools_gateway()  # configured MCP servers' tools join as hidden ops
    registry, archive, library = gateway.registry, engine.archive, engine.library
    instructions = await asyncio.to_thread(server_instructions, registry, context, archive, library)
    if http is None:
        caller = engine_caller(engine, gateway, context)
        server = SylkMcpServer(
            gateway,
            context,
            caller.providers,
            caller.prompts,
            instructions=instructions,
            redactor=engine.redactor,
        )
        return await serve_stdio(server.build(), stop)

    def make_caller() -> Caller:
        if session is not None:  # every client acts in the bound session
            return engine_caller(engine, gateway, context)
        fresh = caller_context(engine, cross_session=cross_session, can_write=can_write)
        return engine_caller(engine, gateway, fresh)

    def release(caller: Caller) -> None:
        if session is None:  # a fresh session nobody else uses: what it unveiled can go
            gateway.forget_session(caller.context.session_id)

    def make_server(callers: CallerLookup) -> Server[Any]:
        return SylkMcpServer(
            gateway, context, instructions=instructions, callers=callers, redactor=engine.redactor
        ).build()

    limits = limits or http_sessions.SessionLimits()
    callers = SessionCallers(make_caller, release, capacity=limits.max_sessions)
    stopping = stop or asyncio.Event()
    if auth is not None:  # every request needs a token; a token's scopes bound its ops
        auth.guard(gateway.hooks)
    await http_transport.serve_http(
        http, sock, make_server, callers, stopping, limits=limits, on_listening=on_listening,
        auth=auth,
    )  # fmt: skip
    return stopping.is_set()
