"""Search and describe show a caller only what it may run.

An external MCP server offered to some roles (a real stdio stub server through the real
gateway) is in no other role's search, listing or count, and describing one of its ops
by name is ACCESS_DENIED as running it is. A caller bounded by an MCP token's grant
(``SkillContext.op_bound``) is likewise shown only the ops within the grant.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from backend.config.mcp_servers import McpSettings
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.hub import McpHub
from backend.mcp.server.auth.grants import Grant
from backend.skills.builtin.catalog import build_gateway
from backend.skills.gateway.gateway import Gateway
from backend.skills.models import SkillContext
from tests.support.polling import until

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one server for the module
STUB = Path(__file__).resolve().parents[2] / "stubs" / "mcp_content_server.py"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    """The builtin ops plus the 'content' server's, offered to the librarian only."""
    body = {"command": [sys.executable, str(STUB)], "timeout_s": 10, "roles": ["librarian"]}
    settings = McpSettings.model_validate({"servers": {"content": body}})
    async with McpHub(settings, cwd=tmp_path_factory.mktemp("cwd")) as hub:
        built = build_gateway()
        attach_skills(hub, built.registry)
        await until(lambda: "content.get_weather" in built.registry, what="content's tools")
        yield built


def caller(agent: str, session: str = "s1", grant: Grant | None = None) -> SkillContext:
    return SkillContext(
        session_id=session,
        agent=agent,
        workspace=Path("/nonexistent"),
        can_write=True,
        op_bound=grant,
    )


def ops_found(gateway: Gateway, ctx: SkillContext, query: str) -> set[str]:
    found = gateway.search(ctx, query, limit=50)
    assert found.ok, found.error
    entries = found.result.get("entry_points", [])
    return {hit["op"] for hit in [*found.result["hits"], *entries]}


async def test_a_role_limited_server_is_seen_only_by_its_roles(gateway: Gateway) -> None:
    librarian, engineer = caller("librarian"), caller("engineer")
    assert "content.mcp_tools" in ops_found(gateway, librarian, "weather of a city")
    assert not any(op.startswith("content.") for op in ops_found(gateway, engineer, "weather"))
    # Its domain and its op count are in the librarian's directory only.
    seen = gateway.describe(librarian, "")
    unseen = gateway.describe(engineer, "")
    assert seen.ok and unseen.ok
    assert "content" in str(seen.result) and "content" not in str(unseen.result)
    listing = gateway.describe(engineer, "content")
    assert listing.error is not None and listing.error.code == "NOT_FOUND"
    assert not any(s.startswith("content.") for s in listing.error.suggestions or [])
    # By exact name: ACCESS_DENIED, saying who it is for, as execute says.
    for op in ("content.mcp_tools", "content.get_weather", "content.get_weather@1"):
        refused = gateway.describe(engineer, op, "schema")
        assert refused.error is not None and refused.error.code == "ACCESS_DENIED", op
        assert refused.error.details["reason"] == "role"
        assert "offered only to librarian" in refused.error.message
    ran = await gateway.execute(engineer, "content.get_weather", {"city": "Rome"}, dry_run=False)
    assert ran.error is not None and ran.error.code == "ACCESS_DENIED"
    assert ran.error.details["roles"] == ["librarian"]
    described = gateway.describe(librarian, "content.get_weather", "schema")
    assert described.ok, described.error


async def test_unveiled_tools_stay_within_the_role(gateway: Gateway) -> None:
    # The entry op's guidance unveils the tools for the session; an engineer acting in
    # the same session still does not see them.
    librarian = caller("librarian", session="shared")
    entry = await gateway.execute(librarian, "content.mcp_tools", {}, dry_run=False)
    assert entry.ok, entry.error
    assert "content.get_weather" in ops_found(gateway, librarian, "weather of a city")
    engineer = caller("engineer", session="shared")
    assert not any(op.startswith("content.") for op in ops_found(gateway, engineer, "weather"))
    typo = await gateway.execute(engineer, "content.get_wether", {}, dry_run=False)
    assert typo.error is not None and typo.error.code == "NOT_FOUND"
    assert not any(s.startswith("content.") for s in typo.error.suggestions or [])


async def test_a_token_grant_bounds_search_describe_and_execute(gateway: Gateway) -> None:
    reader = Grant("reader", ("domain:librarian", "route:archivalist.memory.*"))
    bounded, free = caller("mcp-client", grant=reader), caller("mcp-client")
    assert any(op.startswith("tester.") for op in ops_found(gateway, free, "run the tests"))
    found = ops_found(gateway, bounded, "run the tests")
    assert found and all(
        op.startswith("librarian.") or op.startswith("archivalist.memory.") for op in found
    )
    directory = gateway.describe(bounded, "")
    assert directory.ok
    domains = str(directory.result)
    assert "librarian" in domains and "tester" not in domains and "engineer" not in domains
    assert gateway.describe(bounded, "archivalist").ok  # its one route still lists
    refused = gateway.describe(bounded, "tester.plan.create", "schema")
    assert refused.error is not None and refused.error.code == "ACCESS_DENIED"
    assert "token 'reader' may not use tester.plan.create" in refused.error.message
    assert refused.error.details["scopes"] == list(reader.scopes)
    ran = await gateway.execute(bounded, "tester.plan.create", {"paths": []}, dry_run=False)
    assert ran.error is not None and ran.error.code == "ACCESS_DENIED"
    assert gateway.describe(bounded, "librarian.file.read", "schema").ok
