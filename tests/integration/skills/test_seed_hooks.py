"""The seed's remaining hooks in a real engine: each fires where the seed puts it and
records what it says (the session's context, the chronicle's SQLite file, the log)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.knowledge.chronicle.models import Category, ChronicleQuery
from backend.llm.types import ChatMessage, ChatOptions, ChatRequest
from backend.skills.builtin.catalog import agent_context
from backend.skills.hooks.registry import PromptData
from backend.skills.hooks.seed_hooks import SEED_HOOKS, seed_hook_rows
from tests.integration.plans.conftest import parts as scripted_parts
from tests.integration.plans.conftest import scripted

PATTERN = {"category": "style", "name": "guard clauses", "pattern": "return early on bad input"}


async def test_every_seed_hook_is_listed_and_installed_but_the_budget_check(
    engine_parts: EngineParts,
) -> None:
    rows = {r["name"]: r for r in seed_hook_rows(engine_parts.gateway.hooks)}
    assert list(rows) == [name for name, _, _ in SEED_HOOKS]
    missing = [name for name, row in rows.items() if not row["installed"]]
    assert set(missing) <= {"token_budget_check"}  # built with the budgets
    assert rows["token_budget_check"]["kind"] == "pre_prompt"


async def test_file_operation_tracking_and_state_update_record_an_engineer_read(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.ensure_session()
    (workspace / "notes.md").write_text("hello\n")
    ctx = agent_context("engineer", session.id, workspace)
    env = await engine_parts.gateway.execute(ctx, "engineer.file.read", {"path": "notes.md"})
    assert env.ok, env.error
    await engine_parts.hook_work.settle()
    [operation] = engine_parts.hook_work.file_operations[session.id]
    assert (operation.op, operation.path, operation.agent) == ("engineer.file.read", "notes.md",
                                                             "engineer")  # fmt: skip
    context = engine_parts.sessions.get(session.id).context
    assert "notes.md" in context.read_files
    assert context.current_step == "engineer ran engineer.file.read: ok"
    assert engine_parts.hook_work.recent_lines(session.id) == [context.current_step]
    # A refused call is a step too, with its code; nobody else's session sees it.
    await engine_parts.gateway.execute(ctx, "engineer.file.read", {"path": "../outside"})
    await engine_parts.hook_work.settle()
    assert engine_parts.hook_work.recent_lines(session.id)[-1].startswith(
        "engineer ran engineer.file.read: "
    )
    assert engine_parts.hook_work.recent_lines("another-session") == []


async def test_pattern_promotion_check_promotes_a_pattern_used_in_two_sessions(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    first = await engine.create_session("one")
    second = await engine.create_session("two")
    entries = []
    for session in (first, second):
        ctx = agent_context("archivalist", session.id, workspace)
        env = await engine_parts.gateway.execute(ctx, "archivalist.pattern.record", PATTERN)
        assert env.ok, env.error
        assert isinstance(env.result, dict)
        entries.append(env.result["entry"]["id"])
    await engine_parts.hook_work.settle()
    chronicle = engine_parts.knowledge.chronicle
    assert not (await chronicle.get(entries[0])).promoted  # one session: stays local
    promoted = await chronicle.get(entries[1])
    assert promoted.promoted and promoted.promoted_reason == "used in 2 sessions"


def test_cross_session_query_handler_scopes_the_archivalist_request(
    engine_parts: EngineParts,
) -> None:
    hooks = engine_parts.gateway.hooks

    def scope(agent: str, text: str) -> PromptData:
        request = ChatRequest(messages=[ChatMessage.user(text)], options=ChatOptions(model="m"))
        return hooks.run_pre_prompt(PromptData(agent, "s1", request))

    crossing = scope("archivalist", "what did we decide in other sessions?")
    assert crossing.extra["query_scope"] == "all_sessions"
    assert any("query with cross_session" in c for c in crossing.context)
    assert scope("archivalist", "what did we decide?").extra["query_scope"] == "s1"
    assert "query_scope" not in scope("librarian", "other sessions?").extra  # Archivalist's


async def test_history_injection_response_logging_and_pattern_extraction_in_a_turn(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    workspace: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    said = "Reviewed.\nPattern: guard clauses - return early on bad input"
    # The turn's request carries the session's recent steps (history_injection).
    scripted(tmp_path, monkeypatch, [{"expect": "engineer ran engineer.file.read: ok",
                                      "text": said, "usage": {"input_tokens": 9}}])  # fmt: skip
    parts = scripted_parts(data_dir, workspace)
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        (workspace / "notes.md").write_text("hello\n")
        ctx = agent_context("engineer", session.id, workspace)
        assert (await parts.gateway.execute(ctx, "engineer.file.read", {"path": "notes.md"})).ok
        with caplog.at_level(logging.INFO, logger="sylk.responses"):
            reply = (await engine.submit(session.id, "@architect review the notes"))[-1]
        assert reply.payload["text"] == said
        logged = [r.getMessage() for r in caplog.records if r.name == "sylk.responses"]
        assert any("agent=architect" in m and "input_tokens=9" in m for m in logged)
        await parts.hook_work.settle()
        query = ChronicleQuery(categories=[Category.PATTERN], current_only=True)
        [entry] = await parts.knowledge.chronicle.query(session.id, query)
        assert entry.title == "guard clauses" and "return early on bad input" in entry.content
    finally:
        await engine.aclose()
