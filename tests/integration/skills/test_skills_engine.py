"""Agents see at most six tools and still reach every skill and every MCP tool."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from backend.config.approvals import ApprovalMode
from backend.config.mcp_servers import McpSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.skills.hooks.registry import HookKind, PromptData
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.support.polling import until

ECHO_SERVER = Path(__file__).resolve().parents[2] / "stubs" / "mcp_echo_server.py"
KEY = "sk-skills-0123456789abcdef"


async def test_an_agent_finds_and_runs_an_mcp_tool_through_the_gateway(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url}
    servers = McpSettings.model_validate(
        {"servers": {"echo": {"command": [sys.executable, str(ECHO_SERVER)]}}}
    )
    settings = load_config(None, env=engine_env(env)).model_copy(update={"mcp_servers": servers})
    llm_stub.push(
        Reply(tool_calls=[StubToolCall("search", {"query": "reverse some text"})]),
        Reply(tool_calls=[StubToolCall("execute", {"op": "echo.mcp_tools"})]),
        Reply(
            tool_calls=[StubToolCall("execute", {"op": "echo.reverse", "args": {"text": "sylk"}})]
        ),
        Reply(text=["Reversed: klys."]),
    )
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    engine = Engine.from_parts(parts)
    try:
        # Servers start in the background: the first turn sees the tools once listed.
        await engine.start_tools()
        await until(lambda: "echo.mcp_tools" in parts.gateway.registry, what="echo's tools")
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@architect reverse the word sylk"))[-1]
        assert reply.payload["text"] == "Reversed: klys.", reply.payload
        results = [
            json.loads(row["data"])["data"]
            for row in parts.archive.load_steps(session.id)
            if row["kind"] == "tool_result"
        ]
        assert "echo.mcp_tools" in results[0]["content"]  # search found the server's entry
        assert "echo.reverse" in results[1]["content"]  # whose guidance unveiled the tool
        assert "klys" in results[2]["content"] and not results[2]["is_error"]
        first_request = llm_stub.requests[0].body
        offered = [tool["name"] for tool in first_request["tools"]]
        assert len(offered) <= 6 and {"search", "execute"} <= set(offered)
    finally:
        await engine.aclose()
    assert parts.mcp.status()[0].pid is None or parts.mcp.status()[0].state.value != "up"


async def test_files_an_agent_writes_land_in_the_session_context(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url}
    write = {
        "op": "engineer.file.write",
        "args": {"path": "notes/todo.md", "content": "- ship it\n"},
        "dry_run": False,
    }
    llm_stub.push(
        Reply(tool_calls=[StubToolCall("execute", write)]),
        Reply(text=["Written."]),
        Reply(text=["I wrote notes/todo.md."]),
    )
    config = EngineConfig(
        data_dir=data_dir, workspace=workspace, approval_mode=ApprovalMode.AUTO_EDIT
    )  # no one here to approve the write
    parts = build(config, load_config(None, env=engine_env(env)))
    engine = Engine.from_parts(parts)
    seen: list[tuple[str, str]] = []

    def remember(data: PromptData) -> None:
        seen.append((data.agent, data.result.text))

    parts.gateway.hooks.add(HookKind.POST_PROMPT, remember, agents=["engineer"])
    try:
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@engineer write the todo note"))[-1]
        assert reply.payload["text"] == "Written.", reply.payload
        assert (workspace / "notes" / "todo.md").read_text() == "- ship it\n"
        context = engine.get_context(session.id)
        touched = {**context.created_files, **context.modified_files}
        assert "notes/todo.md" in touched
        assert touched["notes/todo.md"].source == "engineer.file.write"
        # The next turn's prompt carries the session context, injected by the hook.
        await engine.submit(session.id, "@engineer what did you change?")
        # It rides on the turn's request message; the system prompt stays as it was.
        body = llm_stub.requests[-1].body
        said = json.dumps(body["messages"][-1])
        assert "## Session context" in said and f"Workspace root: {workspace}" in said
        assert "Files changed in this session: notes/todo.md" in said
        assert body["system"] == llm_stub.requests[0].body["system"]
        # Post-prompt hooks see every model result of the agent's turns.
        assert seen == [("engineer", ""), ("engineer", "Written."),
                        ("engineer", "I wrote notes/todo.md.")]  # fmt: skip
    finally:
        await engine.aclose()


async def test_the_engineer_consults_the_knowledge_agents_and_it_is_logged(
    engine: Engine, engine_parts: EngineParts, engine_config: EngineConfig, workspace: Path
) -> None:
    from backend.knowledge.chronicle.models import Category, ChronicleQuery
    from backend.skills.builtin.catalog import agent_context

    (workspace / "billing").mkdir()
    (workspace / "billing" / "ledger.py").write_text(
        "import os\n\n\nclass InvoiceLedger:\n    pass\n"
    )
    session = await engine.ensure_session()
    await engine.start_indexing(session.id)
    await engine_parts.knowledge.chronicle.store(
        session.id, Category.DECISION, "Invoices stay in SQLite; no Postgres until 10k users.",
        title="invoice storage",
    )  # fmt: skip
    ctx = agent_context("engineer", session.id, workspace)

    async def consult(agent: str, question: str) -> dict[str, Any]:
        gateway = engine_parts.gateway
        env = await gateway.execute(ctx, f"engineer.consult.{agent}", {"question": question})
        assert env.ok, env.error
        assert isinstance(env.result, dict)
        return env.result

    where = await consult("librarian", "where is InvoiceLedger defined?")
    assert where["answered"] and "billing/ledger.py:4" in where["answer"]
    decided = await consult("archivalist", "what did we decide about invoice storage?")
    assert "no Postgres until 10k users" in decided["answer"]
    advice = await consult("academic", "best practices for retries with backoff")
    assert "sylk://library/errors/retries-backoff" in advice["answer"]

    await engine.aclose()  # waits for the hooks' background writes
    reopened_parts = build(EngineConfig(data_dir=engine_config.data_dir, workspace=workspace))
    reopened = Engine.from_parts(reopened_parts)
    try:
        timeline = await reopened_parts.knowledge.chronicle.query(
            session.id, ChronicleQuery(categories=[Category.TIMELINE])
        )
        logged = sorted(e.content for e in timeline)
        assert len(logged) == 3 and all(e.agent == "engineer" for e in timeline)
        assert any(
            line.startswith("Consulted the librarian: where is InvoiceLedger") for line in logged
        )
    finally:
        await reopened.aclose()


# Ops that answer "not available" in a fresh engine, naming the part that would serve
# them: the Academic's topic research answers from the local library, and a topic the
# library lacks needs web research, which Sylk does not do. Every other op works.
AWAITING = frozenset({
    "academic.research.topic",
})  # fmt: skip


async def test_every_op_is_reachable_by_its_own_agent_with_default_rights(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    """As a model would: search finds the op by what it does, execute runs it."""
    from backend.agents.gateway_tools import GatewayToolExecutor
    from backend.skills.builtin.catalog import agent_context

    (workspace / "README.md").write_text("hello\n")
    for rel, text in {"src/app.py": "def main():\n    return old_name()\n",
                      "backend/engine.py": "import os\n"}.items():  # fmt: skip
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    session = await engine.ensure_session()
    await engine.approval_command(session.id, "auto-edit")  # writes run; no one to approve
    await engine.start_indexing(session.id)
    waiting: set[str] = set()
    gateway = engine_parts.gateway
    for skill in list(gateway.registry):
        ex = GatewayToolExecutor(gateway, agent_context(skill.agent, session.id, workspace))
        if skill.searchable:
            found = await ex.dispatch("search", {"query": skill.description, "limit": 5})
            assert skill.op in [h["op"] for h in found.result["hits"]], skill.op
        args = skill.examples[0].args if skill.examples else {}
        env = await ex.dispatch("execute", {"op": skill.op, "args": args})
        if env.error is None:
            continue
        code, reason = env.error.code.value, env.error.details.get("reason")
        if reason == "not_available":
            waiting.add(skill.op)
            assert "provided by" in env.error.message, env.error.message
        elif reason == "approval_required":  # runs the project's tools: nobody to ask here
            assert skill.action == "command", (skill.op, env.error)
        elif reason == "plan_not_approved":  # the plan the Architect's example made waits
            assert skill.op == "orchestrator.dag.execute", (skill.op, env.error)
        elif reason == "nothing_running":  # no plan runs in this fresh session to stop
            assert skill.op == "architect.execution.interrupt", (skill.op, env.error)
        else:  # an example naming a session or entry this fresh engine does not have
            assert code == "NOT_FOUND", (skill.op, env.error)
    assert waiting == AWAITING
