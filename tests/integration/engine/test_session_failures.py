"""A session's end and what it leaves: its agents' context meters forgotten when it is
closed or deleted, and the idle timer running under ``sylk mcp serve`` as under the TUI
(a fake wall clock instead of waiting)."""

from __future__ import annotations

from pathlib import Path

from backend.config.session_limits import SessionSettings
from backend.config.settings import SylkConfig
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.llm.types import Usage
from backend.sessions.models import SessionState
from tests.integration.mcp.test_mcp_serve_clients import serving
from tests.support.clocks import FakeWall


async def test_closing_or_deleting_a_session_forgets_its_agents_context(engine: Engine) -> None:
    ledger = engine._parts.turns.context
    closed = await engine.create_session("closed")
    deleted = await engine.create_session("deleted")
    kept = await engine.create_session("kept")
    for session in (closed, deleted, kept):
        ledger.note_usage(session.id, "guide", Usage(input_tokens=10, output_tokens=1))
    await engine.close_session(closed.id)
    await engine.delete_session(deleted.id)
    held = {session for session, _ in ledger._agents}
    assert held == {kept.id}


async def test_mcp_serve_starts_the_idle_timer_and_an_idle_session_suspends(
    data_dir: Path, workspace: Path
) -> None:
    settings = SylkConfig(sessions=SessionSettings(auto_suspend_after_s=600))
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    engine = Engine.from_parts(build(config, settings))
    try:
        session = await engine.create_session("served")
        timer = engine.idle_timer
        wall = FakeWall(engine.get_session(session.id).last_active_at)
        timer.clock = wall
        assert not timer.started
        async with serving(engine, session=session.id):
            assert timer.started  # as the TUI's start does
            wall.advance(minutes=10)
            assert await timer.sweep() == [session.id]
        assert engine.get_session(session.id).state is SessionState.SUSPENDED
    finally:
        await engine.aclose()
