"""Two sessions on one repository: each in its own worktree, both merged back, and a
third pair's conflict reported file by file. The real engine, real git, real files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backend.config.approvals import ApprovalMode
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.sessions.models import Session
from backend.skills.builtin.catalog import agent_context
from backend.worktrees import MergeConflictError
from tests.support.git_repos import git, make_repo, show

FILES = {"app.py": "def main():\n    return 1\n", "lib/util.py": "X = 1\n", "README": "hi\n"}


@pytest.fixture
async def repo_engine(tmp_path: Path, data_dir: Path) -> AsyncIterator[Engine]:
    repo = make_repo(tmp_path / "repo", FILES)
    engine = Engine.from_parts(
        build(EngineConfig(data_dir=data_dir, workspace=repo, approval_mode=ApprovalMode.AUTO_EDIT))
    )
    yield engine
    await engine.aclose()


async def write(engine: Engine, session: Session, path: str, content: str) -> None:
    """The engineer's write op, through the engine's own gateway, in the session."""
    ctx = agent_context("engineer", session.id, Path(session.workspace))
    gateway = await engine.tools_gateway()
    if (Path(session.workspace) / path).exists():  # an edit reads the file first
        read = await gateway.execute(ctx, "engineer.file.read", {"path": path}, dry_run=False)
        assert read.ok, read
    got = await gateway.execute(
        ctx, "engineer.file.write", {"path": path, "content": content}, dry_run=False
    )
    assert got.ok, got


async def test_two_sessions_edit_in_parallel_isolated_then_both_merge_back(
    repo_engine: Engine, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    one = await repo_engine.create_session("feature one")
    two = await repo_engine.create_session("feature two")
    assert one.branch_name and two.branch_name and one.branch_name != two.branch_name
    assert one.base_branch == two.base_branch == "main"
    assert Path(one.workspace) != repo and Path(two.workspace) != repo

    await asyncio.gather(
        write(repo_engine, one, "one.txt", "from one\n"),
        write(repo_engine, two, "lib/util.py", "X = 2\n"),
    )
    # Each sees only its own edit; the user's checkout sees neither.
    assert (Path(one.workspace) / "one.txt").read_text() == "from one\n"
    assert not (Path(two.workspace) / "one.txt").exists()
    assert (Path(two.workspace) / "lib/util.py").read_text() == "X = 2\n"
    assert (Path(one.workspace) / "lib/util.py").read_text() == "X = 1\n"
    assert not (repo / "one.txt").exists()

    said_one = await repo_engine.merge_session(one.id, "ff")
    said_two = await repo_engine.merge_session(two.id, "merge")
    assert "fast-forwarded" in said_one and "merged" in said_two
    assert (repo / "one.txt").read_text() == "from one\n"  # the clean checkout followed
    assert (repo / "lib/util.py").read_text() == "X = 2\n"
    assert show(repo, "main", "one.txt") == "from one\n"
    message = git(repo, "log", "-1", "--format=%s%n%b", "main")
    assert "feature two" in message  # the merge commit names the session
    assert git(repo, "status", "--porcelain") == ""


async def test_a_conflicting_pair_is_reported_with_its_files_and_nothing_moves(
    repo_engine: Engine, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    left = await repo_engine.create_session("left")
    right = await repo_engine.create_session("right")
    await asyncio.gather(
        write(repo_engine, left, "app.py", "def main():\n    return 'left'\n"),
        write(repo_engine, right, "app.py", "def main():\n    return 'right'\n"),
    )
    await write(repo_engine, right, "README", "right readme\n")
    await repo_engine.merge_session(left.id, "squash")
    before = git(repo, "rev-parse", "main")
    with pytest.raises(MergeConflictError) as caught:
        await repo_engine.merge_session(right.id, "merge")
    assert [(f.path, f.kind) for f in caught.value.files] == [("app.py", "contents")]
    assert "app.py" in str(caught.value)
    assert git(repo, "rev-parse", "main") == before  # nothing changed ...
    assert "'left'" in (repo / "app.py").read_text()
    assert (repo / "README").read_text() == "hi\n"  # ... and nothing half-applied
    assert (Path(right.workspace) / "app.py").read_text() == "def main():\n    return 'right'\n"
