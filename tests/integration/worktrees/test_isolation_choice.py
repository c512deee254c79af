"""A session's own isolation choice (``SessionConfig.enable_git_isolation``, tri-state):
``Engine.create_session(isolation=...)``, ``/session new NAME --no-isolation``,
``sylk sessions new NAME --no-isolation``, kept across a restart; an archive row
written before the choice existed; deleting a session with unmerged work says so
where it outlives the transcript (an engine notice, ``worktree_removal``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import EngineNotice
from backend.sessions.models import Session, SessionConfig
from tests.support.engine_env import quiet_config
from tests.support.git_repos import git, make_repo


def open_engine(data_dir: Path, workspace: Path, **settings: object) -> Engine:
    config = quiet_config(**settings)
    return Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=workspace), config))


def repo_at(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": "A = 1\n"})


async def test_a_session_turned_off_works_in_place_and_keeps_its_choice(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = repo_at(tmp_path)
    engine = open_engine(data_dir, repo)
    try:
        plain = await engine.create_session("in place", isolation=False)
        isolated = await engine.create_session("own tree")  # None: the config's default (on)
        assert Path(plain.workspace) == repo and plain.branch_name is None
        assert plain.config.enable_git_isolation is False
        line = "isolation: none (turned off for this session)"
        assert engine.status_facts(plain.id).isolation == line
        assert isolated.branch_name is not None and Path(isolated.workspace) != repo
        assert isolated.config.enable_git_isolation is None
    finally:
        await engine.aclose()
    again = open_engine(data_dir, repo)  # the choice is archived with the session
    try:
        kept = again.get_session(plain.id)
        assert kept.config.enable_git_isolation is False
        await again._parts.worktrees.ensure(plain.id)  # before a turn: still in place
        assert Path(again.get_session(plain.id).workspace) == repo
    finally:
        await again.aclose()


async def test_a_session_asks_for_a_worktree_the_config_turns_off(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = repo_at(tmp_path)
    engine = open_engine(data_dir, repo, sessions={"git_isolation": False})
    try:
        default = await engine.create_session("follows")
        own = await engine.create_session("asks", isolation=True)
        assert Path(default.workspace) == repo
        assert engine.status_facts(default.id).isolation == (
            "isolation: none (turned off in the config)"
        )
        assert own.branch_name is not None and (Path(own.workspace) / "app.py").exists()
    finally:
        await engine.aclose()


async def test_slash_new_no_isolation(tmp_path: Path, data_dir: Path) -> None:
    repo = repo_at(tmp_path)
    engine = open_engine(data_dir, repo)
    try:
        here = await engine.create_session("first")
        said = await engine.submit(here.id, "/session new scratch pad --no-isolation")
        text = str(said[-1].payload["text"])
        assert "'scratch pad'" in text and "isolation: none (turned off for this session)" in text
        made = next(s for s in engine.list_sessions() if s.name == "scratch pad")
        assert Path(made.workspace) == repo and made.config.enable_git_isolation is False
        assert git(repo, "worktree", "list").count("\n") == 2  # the repo and 'first' only
    finally:
        await engine.aclose()


def test_an_archive_row_from_before_the_choice_follows_the_config() -> None:
    # As rows were written before: every key, no "revision", False only as the old default.
    old = {
        "max_concurrent_tasks": 4,
        "max_engineers": 4,
        "task_timeout": "PT30M",
        "session_timeout": None,
        "auto_suspend_after": None,
        "enable_git_isolation": False,
    }
    assert SessionConfig.model_validate(old).enable_git_isolation is None
    session = Session.model_validate_json(
        Session(name="old", workspace="/w").model_dump_json(exclude={"config": {"revision"}})
    )
    assert session.config.enable_git_isolation is None
    chosen = SessionConfig(enable_git_isolation=False)  # a choice made now is kept
    assert SessionConfig.model_validate_json(chosen.model_dump_json()) == chosen
    assert SessionConfig(max_engineers=2, enable_git_isolation=False).enable_git_isolation is False


async def test_deleting_a_session_with_unmerged_work_says_so_outside_its_transcript(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = repo_at(tmp_path)
    engine = open_engine(data_dir, repo)
    heard: list[EngineNotice] = []
    stop = engine.events.add_listener(
        lambda event: heard.append(event) if isinstance(event, EngineNotice) else None
    )
    try:
        session = await engine.create_session("doomed")
        (Path(session.workspace) / "work.txt").write_text("mine\n")
        await engine.delete_session(session.id)
        kept = [n for n in heard if session.branch_name and session.branch_name in n.text]
        assert kept and kept[0].level == "warning" and "'doomed'" in kept[0].text
        assert "unmerged work is kept" in kept[0].text
        said = engine.worktree_removal(session.id)
        assert said is not None and f"branch {session.branch_name}" in said
        assert git(repo, "show", f"{session.branch_name}:work.txt") == "mine\n"
    finally:
        stop()
        await engine.aclose()


def test_cli_new_no_isolation(tmp_path: Path, data_dir: Path) -> None:
    repo = repo_at(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "sessions", "new", "cli pad", "--no-isolation",
         "--data-dir", str(data_dir), "--workspace", str(repo)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(repo, "worktree", "list").count("\n") == 1  # no worktree was made
    assert "sylk/" not in git(repo, "branch", "--format=%(refname:short)")
