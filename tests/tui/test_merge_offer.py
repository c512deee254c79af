"""Completing a session on its own branch offers to merge it back, on a real engine in a
real git repository: squash merges; a conflict comes back as the engine's typed error,
file by file, in a notification and the transcript, and nothing moves; "later" keeps
the branch; a session working in place is not asked; the delete of a session with
unmerged work says where its work is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.sessions.models import SessionState
from screens.sessions.confirm import ConfirmScreen
from screens.sessions.merge_offer import MergeOfferScreen
from tests.support.engine_env import quiet_config
from tests.support.git_repos import git, make_repo
from tests.tui.support import RecordingApp, settle, transcript_texts, wait_for

SIZE = (120, 40)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": "A = 1\n"})


@pytest.fixture
async def repo_engine(repo: Path, data_dir: Path) -> AsyncIterator[Engine]:
    config = EngineConfig(data_dir=data_dir, workspace=repo)
    engine = Engine.from_parts(build(config, quiet_config()))
    yield engine
    await engine.aclose()


async def complete(app: RecordingApp, pilot: Pilot[Any]) -> None:
    await pilot.press("alt+c")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirm")
    await pilot.press("y")
    await wait_for(pilot, lambda: isinstance(app.screen, MergeOfferScreen), "the offer")


async def test_completing_offers_merge_and_squash_merges(repo_engine: Engine, repo: Path) -> None:
    session = await repo_engine.create_session("feature")
    (Path(session.workspace) / "app.py").write_text("A = 2\n")
    app = RecordingApp(repo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await complete(app, pilot)
        offer = app.screen
        assert isinstance(offer, MergeOfferScreen) and offer.branch == session.branch_name
        await pilot.press("s")
        await wait_for(pilot, lambda: (repo / "app.py").read_text() == "A = 2\n", "the squash")
        await wait_for(pilot, lambda: any("squashed" in m for _, m in app.notices), "notice")
        assert any("squashed" in t for t in transcript_texts(app))
    assert repo_engine.get_session(session.id).state is SessionState.COMPLETED


async def test_a_conflict_is_told_file_by_file_and_nothing_moves(
    repo_engine: Engine, repo: Path
) -> None:
    session = await repo_engine.create_session("clash")
    (Path(session.workspace) / "app.py").write_text("A = 'session'\n")
    (repo / "app.py").write_text("A = 'user'\n")
    git(repo, "commit", "-qam", "the user's own change")
    before = git(repo, "rev-parse", "main")
    app = RecordingApp(repo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await complete(app, pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: any(s == "error" for s, _ in app.notices), "the error")
        said = next(m for s, m in app.notices if s == "error")
        assert "app.py" in said and "conflict" in said.lower()
        assert any("app.py" in t and "conflict" in t.lower() for t in transcript_texts(app))
    assert git(repo, "rev-parse", "main") == before
    assert (repo / "app.py").read_text() == "A = 'user'\n"


async def test_later_keeps_the_branch(repo_engine: Engine, repo: Path) -> None:
    session = await repo_engine.create_session("not yet")
    (Path(session.workspace) / "app.py").write_text("A = 3\n")
    app = RecordingApp(repo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await complete(app, pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, MergeOfferScreen)
        assert any("stays on" in m for _, m in app.notices)
    assert (repo / "app.py").read_text() == "A = 1\n"
    assert f"{session.branch_name}" in git(repo, "branch", "--format=%(refname:short)")


async def test_a_session_in_place_is_not_asked(repo: Path, data_dir: Path) -> None:
    engine = Engine.from_parts(build(EngineConfig(data_dir=data_dir, workspace=repo), None))
    try:
        session = await engine.create_session("plain", isolation=False)
        app = RecordingApp(engine)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("alt+c", "y")
            await wait_for(
                pilot,
                lambda: engine.get_session(session.id).state is SessionState.COMPLETED,
                "completed",
            )
            await settle(pilot)
            assert not isinstance(app.screen, MergeOfferScreen)
    finally:
        await engine.aclose()


async def test_deleting_unmerged_work_toasts_where_it_is_kept(
    repo_engine: Engine, repo: Path
) -> None:
    session = await repo_engine.create_session("doomed")
    (Path(session.workspace) / "work.txt").write_text("mine\n")
    app = RecordingApp(repo_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+d", "y")
        await wait_for(
            pilot,
            lambda: any(s == "warning" and "kept" in m for s, m in app.notices),
            "the notice",
        )
        said = next(m for s, m in app.notices if s == "warning" and "kept" in m)
        assert f"branch {session.branch_name}" in said
