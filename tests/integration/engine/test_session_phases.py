"""The session's phase through the engine's public API, on a real archive file:
moved, announced, shown, and kept across suspend, resume, restart, kill -9 and
snapshot/restore."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.errors import ErrorKind
from backend.events import EngineEvent, SessionChanged, SessionPhaseChanged
from backend.sessions.phases import (
    PhaseRequestError,
    PhaseTransitionError,
    SessionPhase,
)
from backend.skills.builtin.catalog import agent_context
from tests.support.engine_env import engine_env

P = SessionPhase
ROOT = Path(__file__).resolve().parents[3]


async def _to_inspection(engine: Engine, sid: str) -> None:
    await engine.set_phase(sid, P.PLANNING, "the user asked for a --verbose flag")
    await engine.set_phase(sid, "execution", "plan approved", approval="q-42")
    await engine.set_phase(sid, P.INSPECTION, "the DAG finished")


async def test_a_move_is_committed_then_announced_with_old_and_new_phase(engine: Engine) -> None:
    session = await engine.create_session("flags")
    seen: list[EngineEvent] = []
    engine.events.add_listener(seen.append)
    moved = await engine.set_phase(session.id, P.PLANNING, "add a --verbose flag")
    assert moved.phase is P.PLANNING and engine.session_phase(session.id) is P.PLANNING
    [event] = seen  # one event per move: the phase's own, not a SessionChanged too
    assert isinstance(event, SessionPhaseChanged)
    assert (event.old_phase, event.phase) == (P.IDLE, P.PLANNING)
    assert event.session.phase is P.PLANNING and event.session_id == session.id
    assert event.reason == "add a --verbose flag"
    # Asking again for the phase it is in changes and announces nothing.
    await engine.set_phase(session.id, "planning", "again")
    assert len(seen) == 1
    [logged] = await engine.phase_history(session.id)
    assert (logged.old, logged.new, logged.reason) == (P.IDLE, P.PLANNING, event.reason)


async def test_an_illegal_move_is_a_typed_refusal_that_stores_nothing(engine: Engine) -> None:
    session = await engine.create_session("strict")
    await engine.set_phase(session.id, P.PLANNING, "a change request")
    with pytest.raises(PhaseTransitionError) as info:
        await engine.set_phase(session.id, P.TESTING, "skip ahead")
    assert info.value.error_kind is ErrorKind.CONFLICT
    assert "planning" in str(info.value) and "execution" in str(info.value)
    with pytest.raises(PhaseTransitionError, match="approval"):
        await engine.set_phase(session.id, P.EXECUTION, "the model says it is approved")
    with pytest.raises(PhaseRequestError) as bad:
        await engine.set_phase(session.id, "shipping", "why not")
    assert bad.value.error_kind is ErrorKind.INVALID
    assert engine.session_phase(session.id) is P.PLANNING
    assert [m.new for m in await engine.phase_history(session.id)] == [P.PLANNING]


async def test_the_phase_survives_suspend_resume_and_restart(
    engine_config: EngineConfig,
) -> None:
    first = Engine.from_parts(build(engine_config))
    try:
        alpha = await first.create_session("alpha")
        await _to_inspection(first, alpha.id)
        beta = await first.create_session("beta")  # alpha is suspended
        await first.set_phase(beta.id, P.RESEARCH, "how do rate limiters work?")
        assert first.session_phase(alpha.id) is P.INSPECTION
        await first.switch_session(alpha.id)  # resumed
        assert first.session_phase(alpha.id) is P.INSPECTION
        history = await first.phase_history(alpha.id)
    finally:
        await first.aclose()
    second = Engine.from_parts(build(engine_config))
    try:
        assert second.session_phase(alpha.id) is P.INSPECTION
        assert second.session_phase(beta.id) is P.RESEARCH
        assert await second.phase_history(alpha.id) == history
        assert [m.approval for m in history] == [None, "q-42", None]
        # ... and the work goes on from there after the restart.
        await second.set_phase(alpha.id, P.TESTING, "no findings")
    finally:
        await second.aclose()
    third = Engine.from_parts(build(engine_config))
    try:
        assert third.session_phase("alpha") is P.TESTING
    finally:
        await third.aclose()


async def test_a_snapshot_records_the_phase_and_restore_brings_it_back(
    engine_config: EngineConfig,
) -> None:
    parts = build(engine_config)
    engine = Engine.from_parts(parts)
    try:
        session = await engine.create_session("snap")
        await engine.set_phase(session.id, P.PLANNING, "a change request")
        snap = await parts.sessions.snapshot(session.id)
        assert snap.session.phase is P.PLANNING
        await engine.set_phase(session.id, P.EXECUTION, "approved", approval="q-1")
        seen: list[EngineEvent] = []
        engine.events.add_listener(seen.append)
        await parts.sessions.restore(snap)
        assert engine.session_phase(session.id) is P.PLANNING
        kinds = [type(e) for e in seen]
        assert kinds == [SessionChanged, SessionPhaseChanged]
        moved = seen[1]
        assert isinstance(moved, SessionPhaseChanged)
        assert (moved.old_phase, moved.phase) == (P.EXECUTION, P.PLANNING)
    finally:
        await engine.aclose()
    again_parts = build(engine_config)
    again = Engine.from_parts(again_parts)
    try:
        assert again.session_phase(session.id) is P.PLANNING
        [stored] = again_parts.sessions.snapshots(session.id)
        assert stored.session.phase is P.PLANNING
        log = await again.phase_history(session.id)
        assert [(m.old, m.new) for m in log] == [
            (P.IDLE, P.PLANNING),
            (P.PLANNING, P.EXECUTION),
            (P.EXECUTION, P.PLANNING),
        ]
        assert snap.id[:8] in log[-1].reason
    finally:
        await again.aclose()


async def test_status_and_the_session_list_show_the_phase(engine: Engine) -> None:
    session = await engine.create_session("shown")
    await engine.set_phase(session.id, P.PLANNING, "a change request")
    status = await engine.submit(session.id, "/status")
    text = str(status[-1].payload["text"])
    assert "Phase: planning (next: execution (with the plan's approval), idle)" in text
    listing = await engine.submit(session.id, "/session list")
    row = next(line for line in str(listing[-1].payload["text"]).splitlines() if "shown" in line)
    assert row.split() == ["*", "1", session.short_id, "active", "planning", "shown"]


async def test_the_sessions_op_tells_a_model_the_phase(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.create_session("told")
    await engine.set_phase(session.id, P.RESEARCH, "how do rate limiters work?")
    ctx = agent_context("architect", session.id, workspace)
    env = await engine_parts.gateway.execute(ctx, "sessions.list", {})
    assert env.ok, env.error
    assert isinstance(env.result, dict)
    [row] = env.result["sessions"]
    assert (row["id"], row["state"], row["phase"]) == (session.id, "active", "research")


async def test_a_reason_holding_a_configured_secret_is_stored_redacted(
    data_dir: Path, workspace: Path
) -> None:
    key = "sk-ant-api03-phase-reason-key-0123456789abcdef"
    settings = load_config(None, env=engine_env(ANTHROPIC_API_KEY=key))
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    try:
        session = await engine.create_session("secret")
        seen: list[EngineEvent] = []
        engine.events.add_listener(seen.append)
        await engine.set_phase(session.id, P.PLANNING, f"rotate {key} please")
        [moved] = seen
        assert isinstance(moved, SessionPhaseChanged) and key not in moved.reason
        [logged] = await engine.phase_history(session.id)
        assert key not in logged.reason and "rotate" in logged.reason
    finally:
        await engine.aclose()


CHILD = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from backend.engine import Engine, EngineConfig

    async def main() -> None:
        config = EngineConfig(data_dir=Path(sys.argv[1]), workspace=Path(sys.argv[2]))
        engine = Engine(config)
        session = await engine.create_session("killed")
        await engine.set_phase(session.id, "planning", "a change request")
        await engine.set_phase(session.id, "execution", "approved", approval="q-9")
        print(session.id, flush=True)  # every move above is committed
        time.sleep(3600)

    asyncio.run(main())
    """
)


def test_a_move_survives_kill_9_right_after_it_returned(data_dir: Path, workspace: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data_dir), str(workspace)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
    )
    try:
        assert child.stdout is not None
        sid = child.stdout.readline().strip()  # EOF, not a hang, if the child fails
        assert sid, "the child printed no session id"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)

    async def reopen() -> None:
        engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace))
        try:
            assert engine.session_phase(sid) is P.EXECUTION
            assert [m.new for m in await engine.phase_history(sid)] == [P.PLANNING, P.EXECUTION]
        finally:
            await engine.aclose()

    asyncio.run(reopen())
