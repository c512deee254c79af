"""An MCP client submits plan documents through `execute architect.plan.create`: with
write rights a valid one is stored in its session awaiting approval; an invalid one is
the error envelope listing every problem; without write rights, or asking in words with
no model configured, a typed refusal."""

from __future__ import annotations

from mcp import Client

from backend.engine import Engine
from backend.mcp.server.server import SylkMcpServer, caller_context
from tests.integration.plans.conftest import bad_doc, plan_doc


async def test_a_client_with_write_rights_submits_a_plan_document(engine: Engine) -> None:
    session = await engine.create_session("beta")
    other = await engine.create_session("gamma", activate=False)
    gateway = await engine.tools_gateway()
    writer = caller_context(engine, session="beta", can_write=True)
    async with Client(SylkMcpServer(gateway, writer, []).build(), cache=None) as client:
        doc = plan_doc("from-tool") | {"session_id": other.id}  # it cannot place itself there
        made = await client.call_tool(
            "execute", {"op": "architect.plan.create", "args": {"plan": doc}}
        )
        assert not made.is_error, made.structured_content
        result = made.structured_content["result"]
        assert (result["plan_id"], result["status"], result["review"]) == (
            "from-tool", "awaiting_approval", "unattended")  # fmt: skip
        assert "/plan approve from-tool" in result["next"]

        bad = await client.call_tool("execute", {"op": "architect.plan.create",
                                                 "args": {"plan": bad_doc("b")}})  # fmt: skip
        assert bad.is_error
        error = bad.structured_content["error"]
        assert error["code"] == "VALIDATION_ERROR"
        assert {p["path"] for p in error["details"]["problems"]} == {
            "nodes[0].agent", "nodes[1].depends_on[0]"}  # fmt: skip

        repeat = {"op": "architect.plan.create", "args": {"plan": plan_doc("from-tool")}}
        again = await client.call_tool("execute", repeat)
        assert again.structured_content["error"]["code"] == "CONFLICT"

        words = await client.call_tool("execute", {"op": "architect.plan.create",
                                                   "args": {"request": "add a flag"}})  # fmt: skip
        assert words.structured_content["error"]["code"] == "CONFLICT"
        assert words.structured_content["error"]["details"]["reason"] == "needs_model"
        assert "needs a model" in words.structured_content["error"]["message"]

    [stored] = await engine.plans(session.id)
    assert stored.document["session_id"] == session.id and stored.source == "mcp-client"
    assert await engine.plans(other.id) == []
    answer = (await engine.submit(session.id, "/plan approve from-tool"))[-1]
    assert answer.payload["text"] == "approved plan from-tool (version 1)"

    reader = caller_context(engine, session="beta", can_write=False)
    async with Client(SylkMcpServer(gateway, reader, []).build(), cache=None) as client:
        refused = await client.call_tool("execute", {"op": "architect.plan.create",
                                                     "args": {"plan": plan_doc("p2")}})  # fmt: skip
        assert refused.structured_content["error"]["code"] == "ACCESS_DENIED"
    assert [p.plan_id for p in await engine.plans(session.id)] == ["from-tool"]
