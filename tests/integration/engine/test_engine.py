"""The Engine facade over a real archive: commands, honesty offline, events, isolation."""

from __future__ import annotations

from typing import Any

import pytest

from backend.engine import Engine, EngineConfig, EngineParts
from backend.errors import SessionNotActiveError, SessionNotFoundError
from backend.events import (
    ActiveSessionChanged,
    EngineEvent,
    MessageAppended,
    SessionChanged,
    SessionCreated,
)
from backend.messages import MessageType
from backend.sessions.models import SessionContext, SessionState


def _texts(messages: list[Any]) -> list[str]:
    return [m.payload["text"] for m in messages]


async def test_first_run_gets_a_foreground_session(engine: Engine) -> None:
    session = await engine.ensure_session()
    assert session.state is SessionState.ACTIVE
    assert (await engine.ensure_session()).id == session.id


async def test_plain_text_is_kept_and_answered_honestly(engine: Engine) -> None:
    session = await engine.ensure_session()
    recorded = await engine.submit(session.id, "add a retry to the fetcher")
    assert [m.type for m in recorded] == [MessageType.USER_INPUT, MessageType.SYSTEM_NOTICE]
    answer = recorded[1].payload["text"]
    assert answer.startswith("No language model is configured")
    assert "ANTHROPIC_API_KEY" in answer and "OPENAI_BASE_URL" in answer
    assert recorded[1].payload["offline"] is True
    assert _texts(await engine.transcript(session.id)) == ["add a retry to the fetcher", answer]


async def test_offline_answers_what_needs_no_model(engine: Engine) -> None:
    session = await engine.ensure_session()
    status = (await engine.submit(session.id, "which model are you?"))[1].payload["text"]
    assert "Sylk is offline" in status
    about = (await engine.submit(session.id, "what can you do"))[1].payload["text"]
    assert "/session new" in about


async def test_session_commands_through_the_composer(engine: Engine) -> None:
    first = await engine.ensure_session()
    out = await engine.submit(first.id, "/session new feature-x")
    assert "created and switched to session 'feature-x'" in out[1].payload["text"]
    second = engine.active_session()
    assert second is not None and second.name == "feature-x"
    assert engine.get_session(first.id).state is SessionState.SUSPENDED

    listing = (await engine.submit(second.id, "/session list"))[1].payload["text"]
    assert "feature-x" in listing and "suspended" in listing

    await engine.submit(second.id, "/session switch 1")
    assert engine.active_session().id == first.id  # type: ignore[union-attr]
    await engine.submit(first.id, "/session suspend")
    assert engine.active_session() is None
    await engine.submit(first.id, f"/session resume {second.id[:6]}")
    assert engine.active_session().id == second.id  # type: ignore[union-attr]
    await engine.submit(second.id, "/session complete feature-x")
    assert engine.get_session(second.id).state is SessionState.COMPLETED


async def test_bad_commands_are_answered_in_the_transcript(engine: Engine) -> None:
    session = await engine.ensure_session()
    for text, fragment in [
        ("/session frob", "unknown /session verb"),
        ("/session switch nope", "no session matches 'nope'"),
        ("/session resume 1", "cannot resume session"),
        ("/whatever", "unknown command"),
    ]:
        reply = (await engine.submit(session.id, text))[1]
        assert fragment in reply.payload["text"]
        assert reply.payload["error"]
    assert engine.active_session().id == session.id  # type: ignore[union-attr]


async def test_plain_text_to_a_suspended_session_is_refused_and_not_recorded(
    engine: Engine,
) -> None:
    session = await engine.ensure_session()
    await engine.suspend_session()
    with pytest.raises(SessionNotActiveError) as info:
        await engine.submit(session.id, "add a retry to the fetcher")
    assert "suspended" in str(info.value) and "resume" in str(info.value)
    assert await engine.transcript(session.id) == []
    # A command still works from there.
    await engine.submit(session.id, f"/session resume {session.id}")
    assert engine.active_session().id == session.id  # type: ignore[union-attr]


async def test_unknown_session(engine: Engine) -> None:
    with pytest.raises(SessionNotFoundError):
        await engine.submit("missing", "hi")
    with pytest.raises(SessionNotFoundError):
        await engine.transcript("missing")


async def test_events_arrive_after_commit_and_in_order(
    engine: Engine, engine_parts: EngineParts
) -> None:
    seen: list[EngineEvent] = []
    sub = engine.events.subscribe()
    engine.events.add_listener(seen.append)
    a = await engine.create_session("a")
    await engine.create_session("b")
    await engine.submit(a.id, "/session list")  # from a suspended session: allowed
    kinds = [e.kind for e in seen]
    assert kinds[:3] == ["session.created", "session.changed", "session.active"]
    assert isinstance(seen[0], SessionCreated)
    switch = [e for e in seen if isinstance(e, ActiveSessionChanged)][-1]
    assert switch.previous_id == a.id
    suspended = [e for e in seen if isinstance(e, SessionChanged) and e.operation == "suspend"]
    assert suspended[0].old_state is SessionState.ACTIVE
    appended = [e for e in seen if isinstance(e, MessageAppended)]
    assert [e.message.type for e in appended] == [
        MessageType.USER_INPUT,
        MessageType.SYSTEM_NOTICE,
    ]
    assert sub.pending() == len(seen)
    # Whatever an event announced is already in the archive.
    stored = engine_parts.archive.load_transcript(a.id)
    assert [m.id for m in stored] == [e.message.id for e in appended]


async def test_context_is_private_through_the_engine(
    engine: Engine, engine_parts: EngineParts
) -> None:
    a = await engine.create_session("a")
    b = await engine.create_session("b")

    def plan(ctx: SessionContext) -> None:
        ctx.current_objective = "ship the parser"

    await engine_parts.sessions.update_context(a.id, plan)
    assert engine.get_context(a.id).current_objective == "ship the parser"
    assert engine.get_context(b.id) == SessionContext()


async def test_names_are_unique(engine: Engine) -> None:
    names = [(await engine.create_session(n)).name for n in ("x", "x", None, None)]
    assert names[0] == "x" and names[1] == "x 1"
    assert len(set(names)) == 4


async def test_restart_keeps_everything(engine_config: EngineConfig) -> None:
    first = Engine(engine_config)
    a = await first.create_session("a")
    await first.submit(a.id, "remember me")
    await first.create_session("b")
    before = [s.model_dump() for s in first.list_sessions()]
    await first.aclose()
    second = Engine(engine_config)
    try:
        assert [s.model_dump() for s in second.list_sessions()] == before
        assert second.active_session().name == "b"  # type: ignore[union-attr]
        assert _texts(await second.transcript(a.id))[0] == "remember me"
    finally:
        await second.aclose()
