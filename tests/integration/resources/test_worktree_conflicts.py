"""Two sessions in worktrees of one git repository: their hunks against the base decide
between "overlapping lines" and "same file"; git never runs the repository's hooks,
fsmonitor or filters."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from backend.config.approvals import ApprovalMode
from backend.engine import EngineConfig
from backend.engine.build import EngineParts, build
from backend.events import EngineEvent, FileConflict
from backend.skills.builtin.catalog import agent_context

LINES = "".join(f"line {n}\n" for n in range(1, 31))


def git(cwd: Path, *args: str) -> str:
    safe = ["-c", "core.hooksPath=/dev/null", "-c", "user.name=t", "-c", "user.email=t@t"]
    done = subprocess.run(["git", *safe, *args], cwd=cwd, check=True, capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name in ("lines.txt", "same.txt", "a.txt", "b.txt"):
        (root / name).write_text(LINES)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    for branch in ("wt-a", "wt-b"):
        git(root, "worktree", "add", "-q", "-b", branch, str(tmp_path / branch))
    # Planted after: anything that would run a program when git looks at the repository.
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(script))
    git(root, "config", "filter.evil.clean", str(script))
    git(root, "config", "diff.evil.textconv", str(script))
    hooks = root / ".git" / "hooks"
    for hook in ("post-checkout", "pre-commit", "reference-transaction"):
        (hooks / hook).write_text(script.read_text())
        (hooks / hook).chmod(0o755)
    for tree in (root, tmp_path / "wt-a", tmp_path / "wt-b"):
        (tree / ".gitattributes").write_text("* filter=evil diff=evil\n")
    return root


@pytest.fixture
async def parts(data_dir: Path, workspace: Path) -> Any:
    built = build(
        EngineConfig(data_dir=data_dir, workspace=workspace, approval_mode=ApprovalMode.AUTO_EDIT)
    )
    yield built
    await built.aclose()


async def in_worktree(parts: EngineParts, repo: Path, name: str) -> str:
    session = await parts.sessions.create_session(name, activate=False)
    base = git(repo, "rev-parse", "main")
    tree = {"repo_root": str(repo), "path": str(repo.parent / f"wt-{name}"), "base": base}
    await parts.sessions.set_metadata(session.id, "worktree", tree)
    return session.id


async def edit(parts: EngineParts, repo: Path, sid: str, who: str, *, path: str, old: str) -> None:
    ctx = agent_context("engineer", sid, (repo.parent / f"wt-{who}").resolve())
    read = await parts.gateway.execute(ctx, "engineer.file.read", {"path": path})
    assert read.ok, read
    args = {"path": path, "old_content": old, "new_content": old.upper()}
    done = await parts.gateway.execute(ctx, "engineer.file.edit", args, dry_run=False)
    assert done.ok, done


def conflicts(events: list[EngineEvent], path: str) -> dict[str, FileConflict]:
    return {e.session_id or "": e for e in events if isinstance(e, FileConflict) and e.path == path}


async def test_worktrees_of_one_repository(parts: EngineParts, repo: Path) -> None:
    a = await in_worktree(parts, repo, "a")
    b = await in_worktree(parts, repo, "b")
    events: list[EngineEvent] = []
    parts.events.add_listener(events.append)

    await edit(parts, repo, a, "a", path="lines.txt", old="line 10\nline 11\nline 12\n")
    await edit(parts, repo, b, "b", path="lines.txt", old="line 11\nline 12\nline 13\n")
    found = conflicts(events, "lines.txt")
    assert set(found) == {a, b}
    assert found[a].other_session_id == b and found[b].other_session_id == a
    assert all(c.lines == (11, 12) and "overlapping lines 11-12" in c.text for c in found.values())

    await edit(parts, repo, a, "a", path="same.txt", old="line 2\n")
    await edit(parts, repo, b, "b", path="same.txt", old="line 25\n")
    found = conflicts(events, "same.txt")
    assert set(found) == {a, b} and all(c.lines is None for c in found.values())
    assert all("same file" in c.text for c in found.values())

    await edit(parts, repo, a, "a", path="a.txt", old="line 5\n")
    await edit(parts, repo, b, "b", path="b.txt", old="line 5\n")
    assert not conflicts(events, "a.txt") and not conflicts(events, "b.txt")

    status = parts.status_text(b)
    assert "lines.txt is also changed by session a" in status and "same.txt" in status
    assert not (repo.parent / "ran").exists(), "a planted hook, fsmonitor or filter ran"
