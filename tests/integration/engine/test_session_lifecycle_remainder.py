"""Fail, close, stats and auto-suspend on a real engine (real SQLite archive, the scripted
model for turns): every transition, the illegal ones refused with typed errors, and the
idle timer driven by a fake wall clock instead of waiting."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from backend.config.session_limits import SessionSettings
from backend.config.settings import SylkConfig
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.errors import ErrorKind, InvalidTransitionError
from backend.messages import Message
from backend.sessions.models import SessionState
from tests.integration.plans.conftest import scripted
from tests.support.clocks import FakeWall
from tests.support.engine_env import quiet_config


def texts(messages: Sequence[Message[dict[str, Any]]]) -> list[str]:
    return [str(m.payload.get("text", "")) for m in messages]


async def test_fail_keeps_the_reason_and_shows_it_in_transcript_list_and_status(
    engine: Engine,
) -> None:
    session = await engine.create_session("work")
    said = await engine.submit(session.id, "/session fail the disk is gone\nand more")
    assert "failed: the disk is gone and more" in texts(said)[-1]
    failed = engine.get_session(session.id)
    assert failed.state is SessionState.FAILED
    assert failed.metadata["failure"] == "the disk is gone and more"
    assert "Session failed: the disk is gone and more" in texts(await engine.transcript(session.id))
    assert "failed: the disk is gone and more" in engine.describe_sessions()
    assert "the disk is gone and more" in engine.status_text(session.id)
    # failing a failed session is refused, typed, and the reason stays
    with pytest.raises(InvalidTransitionError) as refused:
        await engine.fail_session(session.id, "again")
    assert refused.value.error_kind is ErrorKind.CONFLICT
    assert engine.get_session(session.id).metadata["failure"] == "the disk is gone and more"


async def test_a_suspended_sessions_work_can_fail_but_a_completed_one_cannot(
    engine: Engine,
) -> None:
    background = await engine.create_session("background")
    await engine.create_session("front")  # the first is suspended now
    assert (await engine.fail_session(background.id, "dag broke")).state is SessionState.FAILED
    done = await engine.create_session("done")
    await engine.complete_session(done.id)
    with pytest.raises(InvalidTransitionError):
        await engine.fail_session(done.id, "too late")


async def test_close_suspends_the_front_session_and_drops_its_agents_state(
    engine: Engine,
) -> None:
    session = await engine.create_session("to close")
    tracker = engine._parts.gateway.tracker
    assert tracker is not None
    tracker.load(session.id, "librarian", next(iter(_contextual_ops(engine))))
    said = await engine.submit(session.id, "/session close")
    assert "closed session 'to close'" in texts(said)[-1]
    closed = engine.get_session(session.id)
    assert closed.closed_at is not None and closed.state is SessionState.SUSPENDED
    assert tracker.loaded(session.id, "librarian") == []  # its agents' state dropped
    assert session.id not in {s.id for s in engine.list_sessions()}
    with pytest.raises(InvalidTransitionError) as again:
        await engine.close_session(session.id)
    assert "closed" in str(again.value)


def _contextual_ops(engine: Engine) -> list[str]:
    from backend.skills.models import SkillTier

    registry = engine._parts.gateway.registry
    return [s.op for s in registry.list(tier=SkillTier.CONTEXTUAL) if s.agent == "librarian"]


async def test_unknown_sessions_and_bad_lines_are_typed_answers(engine: Engine) -> None:
    session = await engine.create_session("here")
    said = await engine.submit(session.id, "/session close nobody")
    assert "no session matches 'nobody'" in texts(said)[-1]
    said = await engine.submit(session.id, "/session stats a b")
    assert "takes one session at most" in texts(said)[-1]
    said = await engine.submit(session.id, "/session restore")
    assert "needs exactly one session" in texts(said)[-1] or "restore" in texts(said)[-1]


async def test_stats_count_turns_messages_tokens_and_dags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [{"text": "One."}, {"text": "Two."}])
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted",
                               watch_files=False))  # fmt: skip
    engine = Engine.from_parts(parts)
    try:
        session = await engine.create_session("counted")
        await engine.submit(session.id, "@librarian where is the flag parsing?")
        await engine.submit(session.id, "@librarian and the help text?")
        stats = await engine.session_stats(session.id)
        assert stats.turns == 2
        assert stats.messages == len(await engine.transcript(session.id))
        assert stats.tokens > 0 and stats.input_tokens > 0
        assert stats.tool_calls == 0 and stats.dags == {}
        said = texts(await engine.submit(session.id, "/session stats"))[-1]
        assert "turns        2" in said and "tokens" in said and "active time" in said
    finally:
        await engine.aclose()


async def idle_engine(data_dir: Path, workspace: Path, after_s: float) -> Engine:
    settings = quiet_config(sessions=SessionSettings(auto_suspend_after_s=after_s))
    return Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=workspace,
                                                watch_files=False), settings))  # fmt: skip


async def test_the_idle_timer_suspends_an_idle_session_only_once_its_time_is_up(
    data_dir: Path, workspace: Path
) -> None:
    engine = await idle_engine(data_dir, workspace, 600)
    try:
        session = await engine.create_session("idle")
        wall = FakeWall(engine.get_session(session.id).last_active_at)
        timer = engine.idle_timer
        timer.clock = wall
        wall.advance(minutes=9, seconds=59)
        assert await timer.sweep() == []
        wall.advance(seconds=1)
        assert await timer.sweep() == [session.id]
        assert engine.get_session(session.id).state is SessionState.SUSPENDED
        assert "Suspended after idling" in texts(await engine.transcript(session.id))[-1]
        assert await timer.sweep() == []  # suspended already: not again
        # a front end's start (resume_dags) starts the timer when a limit is configured
        assert await engine.resume_dags() == []
        assert timer.started
    finally:
        await engine.aclose()


async def test_the_idle_timer_spares_the_session_a_front_end_shows(
    data_dir: Path, workspace: Path
) -> None:
    engine = await idle_engine(data_dir, workspace, 60)
    try:
        session = await engine.create_session("shown")
        timer = engine.idle_timer
        timer.clock = FakeWall(engine.get_session(session.id).last_active_at + timedelta(hours=1))
        detach = engine.attach_questions()  # a front end shows the foreground session
        assert await timer.sweep() == []
        detach()  # no front end: the foreground idles out too
        assert await timer.sweep() == [session.id]
    finally:
        await engine.aclose()


async def test_a_session_limit_overrides_the_config_and_none_means_never(
    data_dir: Path, workspace: Path, engine: Engine
) -> None:
    session = await engine.create_session("no limit")
    timer = engine.idle_timer
    timer.clock = FakeWall(engine.get_session(session.id).last_active_at + timedelta(days=9))
    assert timer.default is None
    assert await timer.sweep() == []
    await engine.resume_dags()
    assert not timer.started


def test_a_bad_sessions_table_is_a_config_error() -> None:
    with pytest.raises(ValueError):
        SessionSettings(auto_suspend_after_s=-1)
    with pytest.raises(ValueError):
        SylkConfig.model_validate({"sessions": {"auto_suspend": 5}})
