"""A restart restores exactly what the engine held: sessions, states, the
foreground session, transcripts and snapshots, through a real archive: a SQLite
file, and a PostgreSQL database (``database_url``)."""

from __future__ import annotations

from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.sessions.models import (
    AgentState,
    FileRecord,
    Note,
    SessionContext,
    SessionState,
)


@pytest.fixture(autouse=True)
def _on_each_backend(archive_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYLK_DATABASE_URL", archive_url)


def _fill_context(ctx: SessionContext) -> None:
    ctx.current_task = "parser"
    ctx.current_step = "tokenizer"
    ctx.current_objective = "ship the parser"
    ctx.completed_steps = ["design", "grammar"]
    ctx.next_steps = ["tests", "docs"]
    ctx.blockers = ["unicode identifiers"]
    ctx.modified_files = {"src/lexer.py": FileRecord(path="src/lexer.py", hash="abc123")}
    ctx.read_files = {"README.md": FileRecord(path="README.md")}
    ctx.created_files = {"src/parser.py": FileRecord(path="src/parser.py", hash="def456")}
    ctx.local_patterns = [Note(text="use a Pratt parser", source="architect")]
    ctx.local_failures = [Note(text="regex lexer too slow")]
    ctx.user_wants = [Note(text="good error messages", source="user")]
    ctx.user_rejects = [Note(text="no parser generators")]
    ctx.active_agents = {"engineer-1": AgentState(role="engineer", status="busy", detail="lexer")}
    ctx.conversation_id = "conv-1"
    ctx.message_history = ["m1", "m2"]


def _more_context(ctx: SessionContext) -> None:
    ctx.current_objective = "cover the edge cases"
    ctx.next_steps.append("fuzzing")


async def _picture(engine: Engine, parts: EngineParts) -> dict[str, Any]:
    """Everything a user could see of the engine's state, as plain data."""
    sessions = engine.list_sessions(include_closed=True)
    active = engine.active_session()
    return {
        "order": [s.id for s in sessions],
        "visible": [s.id for s in engine.list_sessions()],
        "states": {s.id: s.state for s in sessions},
        "active": active.id if active else None,
        "contexts": {s.id: engine.get_context(s.id).model_dump() for s in sessions},
        "transcripts": {
            s.id: [m.model_dump() for m in await engine.transcript(s.id)] for s in sessions
        },
        "tails": {s.id: [m.id for m in await engine.transcript(s.id, limit=2)] for s in sessions},
        "counts": engine.transcript_counts(),
        "snapshots": {
            s.id: [x.model_dump() for x in parts.sessions.snapshots(s.id)] for s in sessions
        },
        "listing": engine.describe_sessions(),
        "sessions": {s.id: s.model_dump() for s in sessions},
    }


async def _busy_history(engine: Engine, parts: EngineParts) -> None:
    alpha = await engine.create_session("alpha")
    await engine.submit(alpha.id, "plan the parser")
    await parts.sessions.update_context(alpha.id, _fill_context)
    beta = await engine.create_session("beta")  # alpha is suspended
    await engine.submit(beta.id, "/session list")
    await engine.submit(beta.id, "write the tests")
    gamma = await engine.create_session("gamma", activate=False)  # stays CREATED
    delta = await engine.create_session("delta")
    await engine.submit(delta.id, "a short one")
    await engine.complete_session(delta.id, summary="done quickly")
    await engine.switch_session(alpha.id)  # resume alpha
    await engine.submit(alpha.id, "/session new epsilon")  # a command makes a session
    epsilon = engine.active_session()
    assert epsilon is not None and epsilon.name == "epsilon"
    await parts.sessions.fail_session(epsilon.id, "the tool crashed")
    await engine.submit(alpha.id, "/help")  # commands work from a suspended session
    await engine.close_session(gamma.id)
    await parts.sessions.snapshot(alpha.id)
    await engine.switch_session("beta")
    await parts.sessions.update_context(beta.id, _more_context)
    await parts.sessions.snapshot(beta.id)
    await engine.submit(beta.id, "/session suspend")
    await engine.submit(beta.id, f"/session resume {beta.id[:8]}")
    await engine.submit(beta.id, "and one more thing")  # the last act: a message


async def test_restart_restores_everything_exactly(engine_config: EngineConfig) -> None:
    first_parts = build(engine_config)
    first = Engine.from_parts(first_parts)
    try:
        await _busy_history(first, first_parts)
        before = await _picture(first, first_parts)
    finally:
        await first.aclose()

    states = set(before["states"].values())
    assert states == {
        SessionState.ACTIVE,
        SessionState.SUSPENDED,
        SessionState.CREATED,
        SessionState.COMPLETED,
        SessionState.FAILED,
    }
    assert sum(len(t) for t in before["transcripts"].values()) >= 14
    assert sum(len(s) for s in before["snapshots"].values()) == 2

    second_parts = build(engine_config)
    second = Engine.from_parts(second_parts)
    try:
        after = await _picture(second, second_parts)
    finally:
        await second.aclose()
    # Field by field first, so a failure names what was lost ...
    for key in ("order", "visible", "states", "active", "contexts", "transcripts", "tails"):
        assert after[key] == before[key], key
    for key in ("counts", "snapshots", "listing"):
        assert after[key] == before[key], key
    # ... then every session, every field.
    for sid, dumped in before["sessions"].items():
        assert after["sessions"][sid] == dumped, f"session {dumped['name']} changed on restart"

    # A third start over the same file changes nothing either.
    third_parts = build(engine_config)
    third = Engine.from_parts(third_parts)
    try:
        assert await _picture(third, third_parts) == after
    finally:
        await third.aclose()


async def test_message_activity_time_survives_restart(engine_config: EngineConfig) -> None:
    """Appending a message moves the session's ``last_active_at`` in memory; a
    restart must not move it back."""
    first_parts = build(engine_config)
    first = Engine.from_parts(first_parts)
    try:
        session = await first.create_session("solo")
        await first.submit(session.id, "hello")
        in_memory = first.get_session(session.id).last_active_at
    finally:
        await first.aclose()
    assert in_memory > session.last_active_at  # the message did touch it
    second_parts = build(engine_config)
    second = Engine.from_parts(second_parts)
    try:
        assert second.get_session(session.id).last_active_at == in_memory
    finally:
        await second.aclose()
