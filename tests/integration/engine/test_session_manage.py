"""Renaming and deleting sessions, the status facts, and the model advice given once."""

from __future__ import annotations

import sqlite3

import pytest

from backend.engine import Engine, EngineConfig
from backend.errors import ErrorKind, SessionNotFoundError
from backend.events import ActiveSessionChanged, EngineEvent, SessionChanged
from backend.llm.offline import MODEL_REMINDER
from backend.sessions.naming import SessionNameError


async def test_a_rename_is_kept_announced_and_found_by_the_new_name(
    engine: Engine, engine_config: EngineConfig
) -> None:
    session = await engine.create_session("draft")
    seen: list[EngineEvent] = []
    engine.events.add_listener(seen.append)
    renamed = await engine.rename_session(session.id, "  retry logic  ")
    assert renamed.name == "retry logic"
    assert engine.get_session("retry logic").id == session.id
    assert any(isinstance(e, SessionChanged) and e.operation == "rename" for e in seen)
    await engine.aclose()
    reopened = Engine(engine_config)
    try:
        assert reopened.get_session(session.id).name == "retry logic"
    finally:
        await reopened.aclose()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("two\nlines", "one line"),
        ("tab\there", "one line"),
        ("esc\x1b[31m", "one line"),
        ("x" * 121, "at most 120"),
        ("OTHER", "already called"),
    ],
)
async def test_a_bad_name_is_refused_and_the_old_one_kept(
    engine: Engine, name: str, why: str
) -> None:
    await engine.create_session("other")
    session = await engine.create_session("mine")
    with pytest.raises(SessionNameError, match=why) as refused:
        await engine.rename_session(session.id, name)
    assert refused.value.error_kind is ErrorKind.INVALID
    assert engine.get_session(session.id).name == "mine"


async def test_renaming_to_its_own_name_in_another_case_is_allowed(engine: Engine) -> None:
    session = await engine.create_session("mine")
    assert (await engine.rename_session(session.id, "Mine")).name == "Mine"


async def test_delete_removes_the_session_and_its_transcript_from_the_archive(
    engine: Engine, engine_config: EngineConfig
) -> None:
    keep = await engine.create_session("keep")
    await engine.submit(keep.id, "hello from keep")
    gone = await engine.create_session("gone")
    await engine.submit(gone.id, "hello from gone")
    seen: list[EngineEvent] = []
    engine.events.add_listener(seen.append)

    deleted = await engine.delete_session(gone.id)

    assert deleted.closed_at is not None
    assert [s.id for s in engine.list_sessions(include_closed=True)] == [keep.id]
    assert engine.active_session() is None  # it was in front: nothing is now
    with pytest.raises(SessionNotFoundError):
        engine.get_session(gone.id)
    changes = [e for e in seen if isinstance(e, SessionChanged)]
    assert [(c.operation, c.session_id) for c in changes] == [("delete", gone.id)]
    assert any(isinstance(e, ActiveSessionChanged) and e.session_id is None for e in seen)
    db = engine_config.data_dir / "sylk.db"
    with sqlite3.connect(db) as conn:  # the file itself, read apart from the engine
        rows = conn.execute("select count(*) from transcript where session_id = ?", (gone.id,))
        assert rows.fetchone()[0] == 0
        rows = conn.execute("select count(*) from transcript where session_id = ?", (keep.id,))
        assert rows.fetchone()[0] > 0
    await engine.aclose()
    reopened = Engine(engine_config)
    try:
        assert [s.name for s in reopened.list_sessions(include_closed=True)] == ["keep"]
    finally:
        await reopened.aclose()


async def test_deleting_an_unknown_session_is_a_typed_error(engine: Engine) -> None:
    with pytest.raises(SessionNotFoundError):
        await engine.delete_session("no-such-session")


async def test_the_model_advice_is_given_once_per_session_then_a_reminder(
    engine: Engine,
) -> None:
    first = await engine.create_session("first")
    answers = [(await engine.submit(first.id, text))[1].payload["text"] for text in ("a", "b")]
    assert "ANTHROPIC_API_KEY" in answers[0]
    assert "ANTHROPIC_API_KEY" not in answers[1] and MODEL_REMINDER in answers[1]
    second = await engine.create_session("second")  # a new session is told again
    fresh = (await engine.submit(second.id, "c"))[1].payload["text"]
    assert "ANTHROPIC_API_KEY" in fresh
    assert "ANTHROPIC_API_KEY" in engine.status_text(first.id)  # /status always says how


async def test_status_facts_offline(engine: Engine) -> None:
    session = await engine.ensure_session()
    await engine.submit(session.id, "/session list")
    facts = engine.status_facts(session.id)
    assert facts.offline
    assert [(m.role, m.model) for m in facts.models] == [
        ("guide", "offline"),
        ("engineer", "offline"),
    ]
    assert facts.session_usage.calls == 0 and facts.all_usage.calls == 0
    assert dict(facts.routes).get("dsl") == 1
    assert facts.mcp_total == 0
    assert facts.watcher == "idle"
