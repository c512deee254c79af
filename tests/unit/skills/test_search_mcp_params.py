"""An MCP tool's arguments are searchable as a built-in op's are.

An MCP tool's parameter model (``backend.mcp.client.as_skills.params_model``) has no
pydantic fields: it carries the server's JSON schema. Search used to read only model
fields, so a tool taking ``url`` and one taking ``path`` looked the same to a query that
named the argument. These use the real parameter model the MCP client builds.
"""

from __future__ import annotations

from typing import Any

from backend.mcp.client.as_skills import params_model
from backend.mcp.client.models import McpTool
from backend.skills.models import Skill, SkillContext, SkillResult, SkillTier
from backend.skills.registry import Registry
from backend.skills.search.fields import param_names, skill_fields
from backend.skills.search.skill_index import SkillIndex


async def _noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def _mcp_skill(name: str, description: str, schema: dict[str, Any]) -> Skill:
    tool = McpTool("web", name, f"web.{name}", description, schema)
    return Skill(
        op=tool.op,
        agent="mcp",
        description=description,
        params=params_model(tool),
        handler=_noop,
        tier=SkillTier.SPECIALISED,
    )


def _schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": sorted(properties)}


URL_TOOL = _mcp_skill(
    "fetch_remote",
    "Fetch a resource and return its contents.",
    _schema(url={"type": "string", "description": "Address of the page, e.g. https://..."}),
)
PATH_TOOL = _mcp_skill(
    "fetch_local",
    "Fetch a resource and return its contents.",
    _schema(path={"type": "string", "description": "Where the document lives"}),
)


def _index(*skills: Skill) -> SkillIndex:
    registry = Registry()
    registry.register_all(list(skills))
    return SkillIndex(registry)


def test_an_mcp_tools_parameter_names_are_indexed() -> None:
    assert param_names(URL_TOOL) == ["url"]
    assert skill_fields(URL_TOOL)["params"] == ["url"]


def test_a_query_naming_the_argument_finds_the_tool_that_takes_it() -> None:
    index = _index(PATH_TOOL, URL_TOOL)
    assert index.search("fetch a resource by url")[0][0] == "web.fetch_remote"
    assert index.search("fetch a resource by path")[0][0] == "web.fetch_local"


def test_only_names_are_indexed_not_the_schemas_json_or_property_descriptions() -> None:
    # "lives" is only in a property's description, "string" only in its type.
    index = _index(PATH_TOOL, URL_TOOL)
    assert index.search("lives") == []
    assert index.search("string") == []


def test_an_unusable_schema_gives_no_names_and_no_error() -> None:
    for schema in ({"type": "object"}, {"type": "object", "properties": ["url"]}, {}):
        skill = _mcp_skill("odd", "An odd tool.", schema)
        assert param_names(skill) == []
        assert _index(skill).search("odd tool")[0][0] == "web.odd"
