"""A session's end and what it leaves: its agents' context meters forgotten when it is
closed or deleted, and the idle timer running under ``sylk mcp serve`` as under the TUI
(a fake wall clock instead of waiting)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend.config.session_limits import SessionSettings
from backend.engine import Engine, EngineConfig, Transcript
from backend.engine.build import build
from backend.errors import SessionNotActiveError
from backend.llm.types import Usage
from backend.sessions.models import SessionState
from tests.integration.mcp.test_mcp_serve_clients import serving
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.plans.conftest import say
from tests.support.clocks import FakeWall
from tests.support.engine_env import quiet_config
from tests.support.git_repos import git, make_repo
from tests.support.polling import until


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
    settings = quiet_config(sessions=SessionSettings(auto_suspend_after_s=600))
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


def texts(transcript: Transcript) -> list[str]:
    return [str(m.payload.get("text", "")) for m in transcript]


def assert_failed_with(engine: Engine, session_id: str, words: str) -> None:
    """Failed, the reason in its metadata, the session list and /status."""
    session = engine.get_session(session_id)
    assert session.state is SessionState.FAILED
    assert words in session.metadata["failure"]
    assert words in engine.describe_sessions()
    assert words in engine.status_text(session_id)


async def test_a_turn_in_a_session_whose_workspace_is_gone_fails_it_with_the_reason(
    data_dir: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "gone"
    workspace.mkdir()
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    engine = Engine.from_parts(build(config))
    try:
        session = await engine.create_session("homeless")
        shutil.rmtree(workspace)
        said = await engine.submit(session.id, "@librarian where is the flag parsing?")
        assert said[-1].payload["text"] == (
            f"Session failed: its workspace {workspace} is gone (deleted or unmounted)"
        )
        assert_failed_with(engine, session.id, f"its workspace {workspace} is gone")
        assert texts(await engine.transcript(session.id))[-1].startswith("Session failed:")
        # A command still answers; a further request is refused as for any failed session.
        assert "failed" in texts(await engine.submit(session.id, "/status"))[-1]
        with pytest.raises(SessionNotActiveError):
            await engine.submit(session.id, "@librarian again?")
    finally:
        await engine.aclose()


def plant_hooks(repo: Path) -> Path:
    """A post-checkout hook and an fsmonitor that would leave a mark if git ran them."""
    mark = repo.parent / "hook-ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {mark}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", f"touch {mark}; false")
    return mark


async def test_a_worktree_gone_with_its_branch_fails_the_session_but_one_gone_alone_is_remade(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "A = 1\n"})
    mark = plant_hooks(repo)
    engine = Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=repo,
                                                  watch_files=False)))  # fmt: skip
    try:
        lost = await engine.create_session("lost")
        remade = await engine.create_session("remade")
        assert lost.branch_name and remade.branch_name
        shutil.rmtree(remade.workspace)  # its branch is left: made again from it
        said = await engine.submit(remade.id, "@librarian where is A?")
        assert engine.get_session(remade.id).state is SessionState.ACTIVE
        assert any(
            "made again" in t for t in texts(said) + texts(await engine.transcript(remade.id))
        )
        remade_app = Path(remade.workspace) / "app.py"
        assert remade_app.is_file()

        await engine.switch_session(lost.id)
        shutil.rmtree(lost.workspace)
        git(repo, "worktree", "prune")
        git(repo, "branch", "-D", lost.branch_name)
        said = await engine.submit(lost.id, "@librarian where is A?")
        reason = f"its branch {lost.branch_name} was deleted"
        assert reason in texts(said)[-1] and texts(said)[-1].startswith("Session failed:")
        assert_failed_with(engine, lost.id, reason)
        lost_tree = Path(lost.workspace)
        assert not lost_tree.exists()  # noqa: ASYNC240 (no empty tree passed off as its work)
        assert not mark.exists()  # the repository's hooks and fsmonitor never ran
    finally:
        await engine.aclose()


async def test_a_dag_run_that_breaks_outside_its_tasks_fails_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("t1", "librarian"))
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(doc), {"text": "Found it.", "pause_s": 0.5},
    ])  # fmt: skip
    run = Run(data_dir, workspace)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        await until(lambda: "running" in run.node_moves("t1"), what="t1 running")
        # The DAG state store becomes unusable while its task runs (closed under it, as
        # when its file system goes away; SQLite's page cache hides a file overwritten).
        await run.parts.dags._store.aclose()
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is None  # no outcome: the run itself broke, not its task
        assert run.dag_moves()[-1] == "failed"
        await until(lambda: run.engine.get_session(sid).state is SessionState.FAILED,
                    what="the session failed")  # fmt: skip
        assert_failed_with(run.engine, sid, "its plan p1's DAG broke: DagStateError")
        said = texts(await run.engine.transcript(sid))
        assert said[-1].startswith("Session failed: its plan p1's DAG broke")
    finally:
        await run.engine.aclose()
