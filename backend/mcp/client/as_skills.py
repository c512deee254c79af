"""External MCP tools as Sylk skills: hidden ops the gateway reaches by name.

Each tool becomes a :class:`~backend.skills.models.Skill` with ``searchable=False``
(it appears in search only once guidance unveils it), ``agent="mcp"`` and tags
``("mcp", <server>)``; each server also gets one searchable entry op,
``<domain>.mcp_tools``, which search finds by what the tools do and whose
guidance unveils them. ``Skill.params`` wants a pydantic model; an MCP tool has
a JSON Schema. :func:`params_model` builds a permissive model per tool that
keeps the schema verbatim (``model_json_schema()`` returns it, so
``Skill.input_schema()`` shows exactly what the server published), validates
arguments against it with ``jsonschema`` when the schema is usable, and hands
the arguments on untouched.

The ops follow each server: when it re-lists its tools (a restart, a
``list_changed`` notification, a refresh) new tools become ops, changed ones are
replaced and dropped ones leave, the registry remembering why (``mark_gone``), so
``execute`` or ``describe`` of one says the server no longer offers it; a disabled
server's ops all leave, and naming one says the server is disabled and how to
enable it.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.json_schema import (
    DEFAULT_REF_TEMPLATE,
    GenerateJsonSchema,
    JsonSchemaMode,
)

from backend.errors import ErrorKind
from backend.mcp.client import server_ops
from backend.mcp.client.content import tool_result
from backend.mcp.client.errors import McpError, McpServerDownError, McpTimeoutError, McpToolError
from backend.mcp.client.hub import McpHub, McpTool
from backend.mcp.client.server_control import McpServerDisabledError, McpToolGoneError
from backend.skills.envelopes import ErrorCode, SkillError, code_for
from backend.skills.models import Guidance, OpKind, Skill, SkillContext, SkillResult, SkillTier
from backend.skills.registry import Registry

log = logging.getLogger(__name__)

MCP_AGENT = "mcp"
ENTRY_NAME = "mcp_tools"  # <domain>.mcp_tools: the searchable entry per server
_CODE_OF_MEANING = {
    ErrorKind.INVALID: ErrorCode.VALIDATION_ERROR,
    ErrorKind.DENIED: ErrorCode.ACCESS_DENIED,
    ErrorKind.NOT_FOUND: ErrorCode.NOT_FOUND,
    ErrorKind.CONFLICT: ErrorCode.CONFLICT,
    ErrorKind.INTERNAL: ErrorCode.INTERNAL,
}


class McpToolParams(BaseModel):
    """Arguments for one MCP tool: any JSON object its schema accepts."""

    model_config = ConfigDict(extra="allow")
    raw_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        return copy.deepcopy(cls.raw_schema)

    @model_validator(mode="before")
    @classmethod
    def _matches_schema(cls, data: Any) -> Any:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError(f"arguments must be a JSON object, not {type(data).__name__}")
        problem = _schema_problem(cls.raw_schema, data)
        if problem:
            raise ValueError(problem)
        return data

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def params_model(tool: McpTool) -> type[McpToolParams]:
    name = "".join(part.capitalize() for part in re.split(r"[._-]", tool.op)) + "Params"
    doc = f"Arguments of MCP tool {tool.name!r}."
    model = cast(type[McpToolParams], type(name, (McpToolParams,), {"__doc__": doc}))
    model.raw_schema = copy.deepcopy(tool.input_schema)
    return model


def _schema_problem(schema: dict[str, Any], data: dict[str, Any]) -> str | None:
    """The first way ``data`` breaks ``schema``, or None; an unusable schema checks nothing
    (the server validates too)."""
    from jsonschema import exceptions, validators  # type: ignore[import-untyped]

    try:
        validator_cls = validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except exceptions.SchemaError:
        return None
    error = exceptions.best_match(validator_cls(schema).iter_errors(data))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)


def as_skill_error(op: str, exc: McpError) -> SkillError:
    """The gateway's typed error for an MCP failure; ``details.reason`` says which kind.

    The code is the error's kind's, except that a tool's own failure keeps its meaning
    (:attr:`McpToolError.meaning`: access denied, not found, bad arguments); the
    server's JSON-RPC code, when it sent one, is in ``details.server_code``.
    """
    code, reason = code_for(exc), "mcp_error"
    details: dict[str, Any] = {"server": exc.server}
    if isinstance(exc, McpToolError):
        reason, code = "mcp_tool_error", _CODE_OF_MEANING[exc.meaning]
        if exc.code is not None:
            details["server_code"] = exc.code
    elif isinstance(exc, McpTimeoutError):
        reason, details["timeout_s"] = "mcp_timeout", exc.timeout_s
    elif isinstance(exc, McpServerDownError):
        reason, details["returncode"] = "mcp_server_down", exc.returncode
    details["reason"] = reason
    return SkillError(code, str(exc), details=details, help_path=op)


def role_refusal(hub: McpHub, server: str, op: str, ctx: SkillContext) -> SkillError | None:
    """ACCESS_DENIED when the server's ``roles`` leave out the caller's role, else None."""
    config = hub.server(server).config
    if config.offered_to(ctx.agent):
        return None
    return SkillError(
        ErrorCode.ACCESS_DENIED,
        f"{ctx.agent} may not use {op}: the MCP server {server!r} is offered only to "
        f"{', '.join(config.roles)}",
        details={"server": server, "reason": "mcp_role", "roles": list(config.roles)},
        help_path=op,
    )


def tool_skill(hub: McpHub, tool: McpTool) -> Skill:
    async def handler(ctx: SkillContext, params: McpToolParams) -> SkillResult:
        refusal = role_refusal(hub, tool.server, tool.op, ctx)
        if refusal is not None:
            raise refusal
        try:
            # The server's own name goes out (``read-file``), whatever the op's spelling.
            outcome = await hub.call_tool(tool.server, tool.name, params.arguments())
        except McpError as exc:
            raise as_skill_error(tool.op, exc) from exc
        return SkillResult(result=tool_result(outcome.text, outcome.structured, outcome.content))

    description = tool.description.strip() or f"Tool {tool.name!r} of MCP server {tool.server!r}."
    return Skill(
        op=tool.op,
        agent=MCP_AGENT,
        description=description,
        params=params_model(tool),
        handler=handler,
        kind=OpKind.READ if tool.read_only else OpKind.WRITE,
        destructive=tool.destructive,
        # It acts outside Sylk's sandbox: the approval policy weighs it unless its
        # server declares it read-only.
        action=None if tool.read_only else "external",
        tier=SkillTier.SPECIALISED,
        tags=(MCP_AGENT, tool.server),
        roles=hub.server(tool.server).config.roles,  # others neither see nor run it
        notes=(f"MCP tool {tool.name!r} served by {tool.server!r}",),
        searchable=False,
    )


class ServerToolsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def server_entry_skill(hub: McpHub, server: str, domain: str, tools: list[McpTool]) -> Skill:
    """The searchable way in to one server's hidden tools (Ernesto's entry point).

    Its description carries every tool's name and description, so ``search``
    finds it for what any of them does; running it restarts the server if it is
    down and a restart is left, lists the tools it has now and its guidance
    unveils each of them for the caller's session.
    """
    listing = "; ".join(f"{t.op}: {_first_line(t)}" for t in tools)

    async def handler(ctx: SkillContext, _params: ServerToolsParams) -> SkillResult:
        refusal = role_refusal(hub, server, f"{domain}.{ENTRY_NAME}", ctx)
        if refusal is not None:
            raise refusal
        warnings = []
        try:
            await hub.server(server).ensure_up()
        except McpServerDownError as exc:  # its last listing still tells what it offered
            warnings.append(str(exc))
        live = offered_tools(hub, server)
        return SkillResult(
            result={
                "server": server,
                "tools": [
                    {"op": t.op, "description": t.description, "input_schema": t.input_schema}
                    for t in live
                ],
            },
            guidance=[Guidance(op=t.op, prose=_first_line(t)[:200]) for t in live],
            warnings=warnings,
        )

    return Skill(
        op=f"{domain}.{ENTRY_NAME}",
        agent=MCP_AGENT,
        description=f"Tools of the MCP server {server!r}. {listing}",
        summary=f"MCP server {server!r}: {len(tools)} tools ({', '.join(t.name for t in tools)})",
        params=ServerToolsParams,
        handler=handler,
        tier=SkillTier.SPECIALISED,
        tags=(MCP_AGENT, server, *(t.name for t in tools)),
        searchable=True,
        entry_point=True,  # a search touching the server's tools always shows the way in
        roles=hub.server(server).config.roles,
    )


def _first_line(tool: McpTool) -> str:
    return (tool.description.strip() or tool.name).split("\n")[0]


# What a registered op stands for: its tool, or (for the entry op) the whole listing,
# marked "unavailable" once the server is down for good. Equal keys mean the registered
# skill is still right and stays as it is.
OpKey = McpTool | tuple[McpTool | str, ...]
UNAVAILABLE = "unavailable"


def unavailable(entry: Skill, server: str, health: str) -> Skill:
    """The entry op of a server down for good: its text is only why, so a search for what
    its tools did no longer finds it first (nor as a domain's way in), while a search
    for the server, ``describe`` of its domain and running it all say it is down."""
    note = f"Unavailable: the MCP server {server!r} is {health}."
    update = {"entry_point": False, "summary": note, "description": note}
    return entry.model_copy(update=update | {"tags": (MCP_AGENT, server)})


def offered_tools(hub: McpHub, server: str) -> list[McpTool]:
    """The server's tools its config's allow/deny globs keep: the others are no ops."""
    config = hub.server(server).config
    return [t for t in hub.tools() if t.server == server and config.offers_tool(t.name)]


def server_skills(hub: McpHub, server: str) -> dict[str, tuple[OpKey, Skill]]:
    """One server's ops as they should be registered now, keyed by op (none when it is
    disabled)."""
    if not hub.is_enabled(server):
        return {}
    tools = offered_tools(hub, server)
    ops: dict[str, tuple[OpKey, Skill]] = {t.op: (t, tool_skill(hub, t)) for t in tools}
    connection = hub.server(server)
    entry = server_entry_skill(hub, server, connection.config.domain, tools)
    key: OpKey = tuple(tools)
    if connection.down_for_good:  # its tools' ops stay: a call says why it cannot run
        entry, key = unavailable(entry, server, connection.health()), (UNAVAILABLE, *tools)
    if tools and entry.op not in ops:  # a tool literally named like the entry keeps its op
        ops[entry.op] = (key, entry)
    return ops


def to_skills(hub: McpHub) -> list[Skill]:
    """One hidden skill per tool of every server that started, plus one searchable entry
    op per server. Call after ``hub.start()``; :func:`attach_skills` also follows restarts."""
    return [
        skill
        for server in hub.servers()
        for _key, skill in server_skills(hub, server.name).values()
    ]


class _Attached:
    """The ops one hub has in one registry, kept in step with each server's listing."""

    def __init__(self, hub: McpHub, registry: Registry) -> None:
        self.hub = hub
        self.registry = registry
        self.held: dict[str, dict[str, OpKey]] = {}

    def sync(self, server: str) -> None:
        wanted = server_skills(self.hub, server)
        disabled = not self.hub.is_enabled(server)
        again = server in self.held
        held = self.held.setdefault(server, {})
        dropped = [op for op, key in held.items() if op not in wanted or wanted[op][0] != key]
        for op in dropped:
            del held[op]
            if op in self.registry:
                self.registry.unregister(op)
            if op not in wanted:  # gone, not replaced: naming it says why
                why = McpServerDisabledError(server) if disabled else McpToolGoneError(server, op)
                self.registry.mark_gone(op, why)
        if disabled:
            self.registry.mark_gone(
                self.hub.config_of(server).domain, McpServerDisabledError(server)
            )
        added = [op for op in wanted if op not in held]
        for op in added:
            key, skill = wanted[op]
            self.registry.register(skill)
            held[op] = key
        if again and (dropped or added):
            log.info(
                "MCP server %r re-listed its tools: dropped %s, added %s",
                server, ", ".join(dropped) or "none", ", ".join(added) or "none",
            )  # fmt: skip


def attach_skills(hub: McpHub, registry: Registry) -> Callable[[], None]:
    """Register every server's ops in ``registry`` now, and again whenever a server lists
    its tools afresh (a restart, a change it announced, a refresh) or is enabled or
    disabled: ops of tools it dropped are unregistered, new ones registered, changed
    ones replaced; with the ``mcp.servers.*`` ops that list, refresh, enable and disable
    the servers. Returns a function that stops following."""
    attached = _Attached(hub, registry)
    if hub.configured() and "mcp.servers.list" not in registry:  # once per registry
        registry.define_domain(server_ops.DOMAIN, description=server_ops.DOMAIN_TEXT)
        registry.register_all(server_ops.server_op_skills(hub))
    for name in hub.configured():
        attached.sync(name)
    return hub.on_tools_changed(attached.sync)
