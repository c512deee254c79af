"""External MCP tools as Sylk skills: hidden ops the gateway reaches by name.

Each tool becomes a :class:`~backend.skills.models.Skill` with ``searchable=False``
(it appears in search only once guidance unveils it), ``agent="mcp"`` and tags
``("mcp", <server>)``. ``Skill.params`` wants a pydantic model; an MCP tool has
a JSON Schema. :func:`params_model` builds a permissive model per tool that
keeps the schema verbatim (``model_json_schema()`` returns it, so
``Skill.input_schema()`` shows exactly what the server published), validates
arguments against it with ``jsonschema`` when the schema is usable, and hands
the arguments on untouched.
"""

from __future__ import annotations

import copy
import re
from typing import Any, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.json_schema import (
    DEFAULT_REF_TEMPLATE,
    GenerateJsonSchema,
    JsonSchemaMode,
)

from backend.mcp.client import McpHub, McpTool
from backend.mcp.errors import McpError, McpServerDownError, McpTimeoutError, McpToolError
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import OpKind, Skill, SkillContext, SkillResult, SkillTier

MCP_AGENT = "mcp"
INVALID_PARAMS = -32602  # JSON-RPC's code, spelled here so the SDK need not load


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
    """The gateway's typed error for an MCP failure; ``details.reason`` says which kind."""
    code, reason = ErrorCode.INTERNAL, "mcp_error"
    details: dict[str, Any] = {"server": exc.server}
    if isinstance(exc, McpToolError):
        reason = "mcp_tool_error"
        if exc.code == INVALID_PARAMS:
            code = ErrorCode.VALIDATION_ERROR
    elif isinstance(exc, McpTimeoutError):
        reason, details["timeout_s"] = "mcp_timeout", exc.timeout_s
    elif isinstance(exc, McpServerDownError):
        reason, details["returncode"] = "mcp_server_down", exc.returncode
    details["reason"] = reason
    return SkillError(code, str(exc), details=details, help_path=op)


def tool_skill(hub: McpHub, tool: McpTool) -> Skill:
    async def handler(_ctx: SkillContext, params: McpToolParams) -> SkillResult:
        try:
            outcome = await hub.call_tool(tool.server, tool.name, params.arguments())
        except McpError as exc:
            raise as_skill_error(tool.op, exc) from exc
        return SkillResult(result=outcome.value())

    description = tool.description.strip() or f"Tool {tool.name!r} of MCP server {tool.server!r}."
    return Skill(
        op=tool.op,
        agent=MCP_AGENT,
        description=description,
        params=params_model(tool),
        handler=handler,
        kind=OpKind.READ if tool.read_only else OpKind.WRITE,
        destructive=tool.destructive,
        tier=SkillTier.SPECIALISED,
        tags=(MCP_AGENT, tool.server),
        notes=(f"MCP tool {tool.name!r} served by {tool.server!r}",),
        searchable=False,
    )


def to_skills(hub: McpHub) -> list[Skill]:
    """One hidden skill per tool of every server that started. Call after ``hub.start()``;
    call again after a restart if a server's tool list may have changed."""
    return [tool_skill(hub, tool) for tool in hub.tools()]
