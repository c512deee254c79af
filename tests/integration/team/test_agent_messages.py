"""Agents talk through the Guide (issue 13): the Engineer's consults travel the Guide's bus
and show in its flow log; a broadcast reaches the next turns of the agents it names; an
engineer's question reaches the user only through the Architect, and the user's answer
(or, with no one to ask, an honest instruction) comes back into the engineer's turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from backend.bus.flow_log import FlowKind
from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.knowledge.chronicle.models import Category
from backend.skills.builtin.catalog import agent_context
from backend.skills.hooks.registry import HookKind, HookPriority, PromptData
from backend.team.messages import NO_ONE
from tests.integration.plans.conftest import parts as scripted_parts
from tests.integration.plans.conftest import scripted
from tests.support.polling import until
from tests.support.scripted import execute


async def _op(parts: EngineParts, ctx: Any, op: str, args: dict[str, Any]) -> Any:
    return await parts.gateway.execute(ctx, op, args, dry_run=False)


def _said_to_model(data: PromptData) -> str:
    return json.dumps(data.request.model_dump(mode="json"))


async def test_a_consult_travels_the_guides_bus_and_answers_as_before(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    (workspace / "billing").mkdir()
    (workspace / "billing" / "ledger.py").write_text("class InvoiceLedger:\n    pass\n")
    session = await engine.ensure_session()
    await engine.start_indexing(session.id)
    await engine_parts.knowledge.chronicle.store(
        session.id, Category.DECISION, "Invoices stay in SQLite.", title="invoice storage"
    )
    ctx = agent_context("engineer", session.id, workspace)
    where = await _op(engine_parts, ctx, "engineer.consult.librarian",
                      {"question": "where is InvoiceLedger defined?"})  # fmt: skip
    assert where.ok, where.error
    assert "billing/ledger.py:1" in where.result["answer"]
    route = where.result["route"]
    assert route["via"] == "guide" and route["to"] == "librarian"
    assert route["type"] == "CONTEXT_REQUEST" and route["reply_type"] == "CONTEXT_RESPONSE"
    decided = await _op(engine_parts, ctx, "engineer.consult.archivalist",
                        {"question": "what did we decide about invoice storage?"})  # fmt: skip
    assert "Invoices stay in SQLite" in decided.result["answer"]
    # The Guide's flow log shows each question sent to the agent and its answer back.
    flows = engine_parts.guide.bus.flow_log.recent(session.id)
    sent = [(f.source, f.target, f.type) for f in flows if f.kind is FlowKind.SEND]
    assert ("engineer", "librarian", "CONTEXT_REQUEST") in sent
    assert ("engineer", "archivalist", "HISTORY_REQUEST") in sent
    answered = [(f.source, f.target) for f in flows if f.kind is FlowKind.RESPOND]
    assert ("librarian", "engineer") in answered and ("archivalist", "engineer") in answered


async def test_a_consult_from_a_clients_own_session_says_it_went_direct(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    ctx = agent_context("engineer", "mcp-client-7", workspace)
    env = await _op(engine_parts, ctx, "engineer.consult.academic",
                    {"question": "best practices for retries with backoff"})  # fmt: skip
    assert env.ok and env.result["route"]["via"] == "direct"
    assert "retries-backoff" in env.result["answer"]


async def test_a_broadcast_reaches_the_next_turns_of_the_agents_it_names(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    data_dir: Path,
) -> None:
    scripted(tmp_path, monkeypatch, [{"text": "Noted, architect."}, {"text": "Noted, engineer."},
                                     {"text": "Tester here."}])  # fmt: skip
    built = scripted_parts(data_dir, workspace)
    engine = Engine.from_parts(built)
    prompts: list[PromptData] = []
    # Post-prompt hooks see each request as sent (pre-prompt hooks run once a turn).
    built.gateway.hooks.add(HookKind.POST_PROMPT, prompts.append, priority=HookPriority.LAST)
    try:
        session = await engine.ensure_session()
        ctx = agent_context("guide", session.id, workspace)
        sent = await _op(built, ctx, "guide.message.broadcast",
                         {"message": "Freeze the public API until Friday.",
                          "agents": ["architect", "engineer"]})  # fmt: skip
        assert sent.ok, sent.error
        assert sent.result["received"] == ["architect", "engineer"] and not sent.result["refused"]
        await engine.submit(session.id, "@architect what should we do next?")
        await engine.submit(session.id, "@engineer anything to know?")
        await engine.submit(session.id, "@tester anything to know?")
        by_agent = {p.agent: _said_to_model(p) for p in prompts}
        for agent in ("architect", "engineer"):
            assert "Freeze the public API until Friday." in by_agent[agent]
            assert "from the guide" in by_agent[agent]
        assert "Freeze the public API" not in by_agent["tester"]  # not named, not told
        flows = built.guide.bus.flow_log.recent(session.id, kind=FlowKind.DELIVER)
        assert {("guide", "architect"), ("guide", "engineer")} <= {
            (f.source, f.target) for f in flows if f.type == "SYSTEM_NOTICE"
        }
        unknown = await _op(built, ctx, "guide.message.broadcast",
                            {"message": "hi", "agents": ["wizard"]})  # fmt: skip
        assert not unknown.ok and unknown.error.code == "NOT_FOUND"
        assert "wizard" in unknown.error.message
    finally:
        await engine.aclose()


def _asks(question: dict[str, Any]) -> list[dict[str, Any]]:
    """The engineer's turns: ask for help, then say what it got."""
    return [{"tool_calls": [execute("engineer.help.request", **question)]}, {"text": "Got it."}]


async def test_an_engineers_question_reaches_the_user_through_the_architect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path, data_dir: Path
) -> None:
    scripted(tmp_path, monkeypatch, _asks({"question": "Keep the v1 endpoints?",
                                           "options": ["keep v1", "drop v1"]}))  # fmt: skip
    built = scripted_parts(data_dir, workspace)
    engine = Engine.from_parts(built)
    prompts: list[PromptData] = []
    # Post-prompt hooks see each request as sent (pre-prompt hooks run once a turn).
    built.gateway.hooks.add(HookKind.POST_PROMPT, prompts.append, priority=HookPriority.LAST)
    detach = built.questions.attach()  # a front end that shows questions
    try:
        session = await engine.ensure_session()
        turn = asyncio.create_task(engine.submit(session.id, "@engineer remove old endpoints"))
        await until(lambda: built.questions.pending(session.id))
        asked = built.questions.pending(session.id)[0]
        assert asked.question.title == "The Architect asks"  # the user never sees the engineer
        assert [o.value for o in asked.question.options] == ["keep v1", "drop v1"]
        assert not asked.question.free_text
        assert built.questions.answer(asked.question_id, "drop v1")
        reply = (await turn)[-1]
        assert reply.payload["text"] == "Got it."
        # The model's next request carries the user's answer as the op's result.
        assert '\\"answer\\": \\"drop v1\\"' in _said_to_model(prompts[-1])
        flows = built.guide.bus.flow_log.recent(session.id)
        assert ("engineer", "architect", "TASK_HELP") in {(f.source, f.target, f.type)
                                                          for f in flows}  # fmt: skip
        assert ("architect", "engineer", "CLARIFICATION_RESPONSE") in {
            (f.source, f.target, f.type) for f in flows if f.kind is FlowKind.RESPOND
        }
    finally:
        detach()
        await engine.aclose()


async def test_a_question_without_options_is_free_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path, data_dir: Path
) -> None:
    scripted(tmp_path, monkeypatch, _asks({"question": "Which header names the tenant?"}))
    built = scripted_parts(data_dir, workspace)
    engine = Engine.from_parts(built)
    prompts: list[PromptData] = []
    # Post-prompt hooks see each request as sent (pre-prompt hooks run once a turn).
    built.gateway.hooks.add(HookKind.POST_PROMPT, prompts.append, priority=HookPriority.LAST)
    detach = built.questions.attach()
    try:
        session = await engine.ensure_session()
        turn = asyncio.create_task(engine.submit(session.id, "@engineer add tenancy"))
        await until(lambda: built.questions.pending(session.id))
        asked = built.questions.pending(session.id)[0]
        assert asked.question.free_text and not asked.question.options
        built.questions.answer(asked.question_id, "X-Tenant-Id")
        await turn
        assert "X-Tenant-Id" in _said_to_model(prompts[-1])
    finally:
        detach()
        await engine.aclose()


async def test_with_no_one_to_ask_the_engineer_is_told_to_state_its_assumption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path, data_dir: Path
) -> None:
    scripted(tmp_path, monkeypatch, _asks({"question": "Keep the v1 endpoints?"}))
    built = scripted_parts(data_dir, workspace)
    engine = Engine.from_parts(built)
    prompts: list[PromptData] = []
    # Post-prompt hooks see each request as sent (pre-prompt hooks run once a turn).
    built.gateway.hooks.add(HookKind.POST_PROMPT, prompts.append, priority=HookPriority.LAST)
    try:
        session = await engine.ensure_session()  # no front end attached, as in `sylk run`
        reply = (await engine.submit(session.id, "@engineer remove old endpoints"))[-1]
        assert reply.payload["text"] == "Got it."
        said = _said_to_model(prompts[-1])
        assert "no_one_to_ask" in said and NO_ONE[:40] in said
        assert not built.questions.pending()
    finally:
        await engine.aclose()


async def test_the_engineer_cannot_ask_the_user_directly(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.ensure_session()
    ctx = agent_context("engineer", session.id, workspace)
    env = await _op(engine_parts, ctx, "architect.user.clarify", {"question": "Which DB?"})
    assert not env.ok and env.error.code == "ACCESS_DENIED"
    assert "engineer.help.request" in env.error.message
