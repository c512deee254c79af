"""A session's worktree through the engine's verbs: /session merge and complete, /status,
restart, a worktree deleted by hand, close, a dirty checkout, a workspace not in git."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig, Transcript
from backend.engine.build import build
from backend.worktrees import DirtyCheckoutError
from tests.support.engine_env import quiet_config
from tests.support.git_repos import git, make_repo


def open_engine(data_dir: Path, workspace: Path, **settings: object) -> Engine:
    config = quiet_config(**settings)
    return Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=workspace), config))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": "A = 1\n", "pkg/mod.py": "B = 1\n"})


@pytest.fixture
async def engine(repo: Path, data_dir: Path) -> AsyncIterator[Engine]:
    eng = open_engine(data_dir, repo / "pkg")  # a sub-folder maps to the same in the worktree
    yield eng
    await eng.aclose()


def last_text(transcript: Transcript) -> str:
    return str(transcript[-1].payload["text"])


async def test_merge_and_complete_are_commands_and_status_names_the_branch(
    engine: Engine, repo: Path
) -> None:
    session = await engine.create_session("fix it")
    tree = Path(session.workspace)
    assert tree.name == "pkg" and (tree / "mod.py").read_text() == "B = 1\n"
    facts = engine.status_facts(session.id)
    assert facts.isolation == f"worktree: {session.branch_name} (from main)"
    assert f"worktree: {session.branch_name} (from main)" in engine.status_text(session.id)
    (tree / "mod.py").write_text("B = 2\n")  # left uncommitted: merge commits it first
    said = last_text(await engine.submit(session.id, "/session complete"))
    assert "/session merge" in said and f"{session.branch_name}" in said
    assert (repo / "pkg/mod.py").read_text() == "B = 1\n"  # completing merged nothing
    said = last_text(await engine.submit(session.id, "/session merge squash"))
    assert "squashed" in said
    assert (repo / "pkg/mod.py").read_text() == "B = 2\n"
    log = git(repo, "log", "--format=%s", f"{session.branch_name}")
    assert "'fix it'" in log.splitlines()[0]  # the commit of its edits names the session


async def test_kept_across_restart_and_made_again_when_deleted_by_hand(
    repo: Path, data_dir: Path
) -> None:
    first = open_engine(data_dir, repo)
    made = await first.create_session("keep")
    (Path(made.workspace) / "new.txt").write_text("kept\n")
    await first.aclose()
    second = open_engine(data_dir, repo)
    try:
        again = second.get_session(made.id)
        assert again.workspace == made.workspace and again.branch_name == made.branch_name
        assert await second._parts.worktrees.ensure(made.id) is None  # re-opened, not made
        assert (Path(again.workspace) / "new.txt").read_text() == "kept\n"
        await second.merge_session(made.id, "ff")  # its edit is on the branch now
        shutil.rmtree(made.workspace)
        notice = await second._parts.worktrees.ensure(made.id)
        assert notice is not None and "made again" in notice
        assert (Path(made.workspace) / "new.txt").read_text() == "kept\n"
        texts = [str(m.payload.get("text")) for m in await second.transcript(made.id)]
        assert any("made again" in t for t in texts)
    finally:
        await second.aclose()


async def test_close_removes_the_worktree_and_keeps_unmerged_work_on_its_branch(
    engine: Engine, repo: Path
) -> None:
    session = await engine.create_session("unmerged")
    tree = Path(session.workspace).parent
    (tree / "work.txt").write_text("mine\n")
    await engine.close_session(session.id)
    assert not tree.exists()
    assert f"{session.branch_name}" in git(repo, "branch", "--format=%(refname:short)")
    assert git(repo, "show", f"{session.branch_name}:work.txt") == "mine\n"
    texts = [str(m.payload.get("text")) for m in await engine.transcript(session.id)]
    assert any("unmerged work is kept on the branch" in t for t in texts)


async def test_a_merged_session_closing_takes_its_branch_too(engine: Engine, repo: Path) -> None:
    session = await engine.create_session("merged")
    (Path(session.workspace) / "mod.py").write_text("B = 3\n")
    await engine.merge_session(session.id, "ff")
    await engine.close_session(session.id)
    assert f"{session.branch_name}" not in git(repo, "branch", "--format=%(refname:short)")


async def test_a_dirty_checkout_is_named_and_nothing_merges(engine: Engine, repo: Path) -> None:
    session = await engine.create_session("dirty")
    (Path(session.workspace) / "mod.py").write_text("B = 4\n")
    (repo / "app.py").write_text("A = 'mine, uncommitted'\n")
    before = git(repo, "rev-parse", "main")
    with pytest.raises(DirtyCheckoutError) as caught:
        await engine.merge_session(session.id, "ff")
    assert caught.value.details == {"reason": "dirty_checkout", "files": ["app.py"]}
    assert git(repo, "rev-parse", "main") == before
    assert (repo / "app.py").read_text() == "A = 'mine, uncommitted'\n"
    said = last_text(await engine.submit(session.id, "/session merge"))
    assert "uncommitted changes (app.py)" in said


async def test_a_workspace_outside_git_works_in_place_and_says_so(
    workspace: Path, data_dir: Path
) -> None:
    engine = open_engine(data_dir, workspace)
    try:
        session = await engine.create_session("plain")
        assert Path(session.workspace) == engine.workspace and session.branch_name is None
        line = "isolation: none (not a git repository)"
        assert engine.status_facts(session.id).isolation == line
        assert line in engine.status_text(session.id)
        said = last_text(await engine.submit(session.id, "/session merge"))
        assert "no worktree of its own" in said
    finally:
        await engine.aclose()


async def test_the_config_turns_isolation_off(repo: Path, data_dir: Path) -> None:
    engine = open_engine(data_dir, repo, sessions={"git_isolation": False})
    try:
        session = await engine.create_session("in place")
        assert Path(session.workspace) == engine.workspace
        assert engine.status_facts(session.id).isolation == (
            "isolation: none (turned off in the config)"
        )
    finally:
        await engine.aclose()


async def test_a_session_archived_before_isolation_gets_its_worktree_at_its_next_turn(
    engine: Engine, repo: Path
) -> None:
    sessions = engine._parts.sessions
    made = await engine.create_session("old")
    # As an archive written before worktrees holds it: in the repository, no metadata
    # (its branch, left behind, is taken up again).
    shutil.rmtree(Path(made.workspace).parent)
    await sessions.set_workspace(made.id, str(repo / "pkg"), None, None)
    await sessions.set_metadata(made.id, "worktree", None)
    await engine._parts.worktrees.ensure(made.id)  # what Engine.submit does before a turn
    now = engine.get_session(made.id)
    assert now.branch_name is not None and Path(now.workspace).name == "pkg"
    assert Path(now.workspace) != repo / "pkg" and (Path(now.workspace) / "mod.py").exists()
