"""An agent's own ``git`` in its session's worktree, from the sandbox, as an attacker.

The worktree's ``.git`` is a file naming ``<repo>/.git/worktrees/<id>``: the user's
repository, outside the workspace. Through the real engine's ``engineer.shell.run``
(real sandbox, real git): git there fails and the op says to use ``/session merge``;
writing the repository's config or hooks, by git or by hand, re-pointing the ``.git``
file, all fail, and a hook planted nonetheless never runs when Sylk merges. Also when
the repository is readable by commands (a PATH entry inside it makes it a read root).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.sandbox.support import LEVELS, sandbox_support
from backend.sessions.models import Session
from backend.skills.builtin.catalog import agent_context
from backend.skills.envelopes import Envelope
from backend.worktrees.sandbox_git import sandboxed_git_hint, worktree_gitdir
from tests.support.engine_env import quiet_config
from tests.support.git_repos import git, make_repo

pytestmark = pytest.mark.skipif(
    sandbox_support().level == "none", reason="no sandbox on this machine: commands run as the user"
)


@pytest.fixture(params=["full", "landlock"])
def level(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each confined level this machine gives (SYLK_SANDBOX caps the probe's answer)."""
    wanted: str = request.param
    if LEVELS.index(wanted) > LEVELS.index(sandbox_support().level):
        pytest.skip(f"this machine gives {sandbox_support().level!r}")
    monkeypatch.setenv("SYLK_SANDBOX", wanted)
    sandbox_support.cache_clear()
    yield wanted
    monkeypatch.delenv("SYLK_SANDBOX")
    sandbox_support.cache_clear()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": "A = 1\n"})


@pytest.fixture
async def engine(repo: Path, data_dir: Path, level: str) -> AsyncIterator[Engine]:
    config = EngineConfig(data_dir=data_dir, workspace=repo)
    settings = quiet_config(approvals={"mode": "auto"})  # the sandbox decides
    eng = Engine.from_parts(build(config, settings))
    yield eng
    await eng.aclose()


async def shell(engine: Engine, session: Session, command: str) -> Envelope:
    ws = Path(session.workspace)
    ctx = agent_context("engineer", session.id, ws, confinement=engine.confinement(ws))
    gateway = await engine.tools_gateway()
    args: dict[str, Any] = {"command": command}
    return await gateway.execute(ctx, "engineer.shell.run", args, dry_run=False)


def guarded(repo: Path) -> dict[str, bytes]:
    """The user's repository's config and hooks, byte for byte."""
    dot = repo / ".git"
    found = {"config": (dot / "config").read_bytes()}
    for hook in sorted((dot / "hooks").iterdir()):
        found[f"hooks/{hook.name}"] = hook.read_bytes()
    return found


ATTACKS = (
    'git config core.hooksPath "$PWD/evil"',
    "git config --worktree core.fsmonitor 'touch {proof}'",
    "printf '[core]\\n\\thooksPath = /tmp\\n' >> {repo}/.git/config",
    "printf '#!/bin/sh\\ntouch {proof}\\n' > {repo}/.git/hooks/post-merge",
    "chmod +x {repo}/.git/hooks/post-merge",
    "printf 'gitdir: {elsewhere}\\n' > .git",
    "rm -f .git",
    "mkdir -p .git/hooks",
)


async def test_git_is_denied_said_plainly_and_the_repository_untouched(
    engine: Engine, repo: Path, tmp_path: Path, level: str
) -> None:
    session = await engine.create_session("agent git")
    tree, proof = Path(session.workspace), tmp_path / "pwned"
    assert worktree_gitdir(tree) == (repo / ".git/worktrees" / tree.name).resolve()
    before, dot_file = guarded(repo), (tree / ".git").read_bytes()
    tip = git(repo, "rev-parse", session.branch_name or "")

    status = await shell(engine, session, "git status --short")
    assert status.ok and status.result["exit_code"] != 0 and status.result["sandbox"] == level
    assert any("/session merge" in w for w in status.meta.warnings)

    (tree / "app.py").write_text("A = 2\n")
    commit = await shell(engine, session, "git -c user.name=a -c user.email=b commit -qam mine")
    assert commit.result["exit_code"] != 0
    assert any("/session merge" in w for w in commit.meta.warnings)

    elsewhere = tmp_path / "elsewhere"
    for attack in ATTACKS:
        line = attack.format(repo=repo, proof=proof, elsewhere=elsewhere)
        done = await shell(engine, session, line)
        assert done.result["exit_code"] != 0, line
    assert guarded(repo) == before and (tree / ".git").read_bytes() == dot_file
    assert git(repo, "rev-parse", session.branch_name or "") == tip  # nothing committed

    said = await engine.merge_session(session.id, "merge")  # Sylk commits, and merges
    assert "merged" in said and (repo / "app.py").read_text() == "A = 2\n"
    assert not proof.exists() and guarded(repo) == before


async def test_a_repository_commands_may_read_stays_unwritten(
    engine: Engine, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PATH entry <repo>/bin makes the repository a read root of every command.
    monkeypatch.setenv("PATH", f"{repo}/bin{os.pathsep}{os.environ.get('PATH', '')}")
    session = await engine.create_session("reader")
    before = guarded(repo)
    listed = await shell(engine, session, f"cat {repo}/.git/config")
    assert listed.result["exit_code"] == 0  # readable now: the point of this case
    for line in (
        "git -c user.name=a -c user.email=b commit -q --allow-empty -m x",
        "git config core.hooksPath /tmp",
        f"printf x >> {repo}/.git/config",
        f"printf x > {repo}/.git/hooks/pre-commit",
    ):
        done = await shell(engine, session, line)
        assert done.result["exit_code"] != 0, line
    assert guarded(repo) == before


def test_the_hint_is_for_a_worktree_only(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain", {"a": "1\n"})
    words = "fatal: not a git repository: /x/.git/worktrees/abc"
    assert worktree_gitdir(plain) is None and sandboxed_git_hint(plain, words) is None
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: /x/.git/worktrees/abc\n")
    (linked / "sub").mkdir()
    assert worktree_gitdir(linked / "sub") == Path("/x/.git/worktrees/abc")
    assert sandboxed_git_hint(linked / "sub", "all fine") is None
    assert "/session merge" in (sandboxed_git_hint(linked / "sub", words) or "")
