"""Checkpoints against a hostile or busy workspace: the user's own repository is never
touched, its filters, hooks and fsmonitor never run, ignored, protected and oversized
files stay out, and content goes in and out byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.checkpoints.service import Checkpoints
from backend.workspace.confinement import Confinement
from tests.integration.checkpoints.conftest import files_of, git

SESSION = "a1b2c3"


async def _edit(checkpoints: Checkpoints, workspace: Path, change: dict[str, bytes]) -> None:
    async with checkpoints.turn(SESSION, "engineer", workspace) as turn:
        await turn.before_change()
        for rel, data in change.items():
            (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            (workspace / rel).write_bytes(data)
        turn.turn_id = "t"


def _repo_state(root: Path) -> dict[str, str | bytes]:
    return {
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "stash": git(root, "stash", "list"),
        "head": git(root, "rev-parse", "HEAD"),
        "refs": git(root, "for-each-ref"),
        "index": (root / ".git" / "index").read_bytes(),
        "config": (root / ".git" / "config").read_bytes(),
    }


async def test_the_workspaces_own_repository_is_untouched(data_dir: Path, project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    (project / "src" / "util.py").write_text("stashed edit\n")
    git(project, "stash", "-q")
    (project / "src" / "app.py").write_text("uncommitted edit\n")
    (project / "scratch.txt").write_text("untracked\n")
    git(project, "add", "scratch.txt")
    before = _repo_state(project)
    checkpoints = Checkpoints(data_dir)
    await _edit(checkpoints, project, {"src/app.py": b"agent\n", "agent.txt": b"a\n"})
    await checkpoints.diff(SESSION, project)
    await checkpoints.undo(SESSION, project)
    assert (project / "src" / "app.py").read_text() == "uncommitted edit\n"
    assert _repo_state(project) == before
    leftovers = [p for p in files_of(project) if "sylk" in p]
    assert leftovers == []  # nothing of Sylk's left in the workspace


async def test_planted_filters_hooks_and_fsmonitor_never_run(
    data_dir: Path, workspace: Path
) -> None:
    marker = workspace.parent / "pwned"
    git(workspace, "init", "-q")
    run = f"touch {marker}"
    git(workspace, "config", "filter.evil.clean", run)
    git(workspace, "config", "filter.evil.smudge", run)
    git(workspace, "config", "filter.evil.required", "true")
    git(workspace, "config", "core.fsmonitor", run)
    git(workspace, "config", "diff.evil.textconv", run)
    hooks = workspace / ".git" / "hooks"
    for name in ("pre-commit", "post-commit", "post-checkout", "post-index-change",
                 "reference-transaction", "fsmonitor-watchman"):  # fmt: skip
        (hooks / name).write_text(f"#!/bin/sh\n{run}\n")
        os.chmod(hooks / name, 0o755)
    (workspace / ".gitattributes").write_text("* filter=evil diff=evil text eol=crlf ident\n")
    crlf = b"line one\r\nline two\n$Id$\n"
    (workspace / "data.txt").write_bytes(crlf)
    checkpoints = Checkpoints(data_dir)
    await _edit(checkpoints, workspace, {"data.txt": b"changed\n", "new.txt": b"x\r\n"})
    diff = await checkpoints.diff(SESSION, workspace)
    assert "+changed" in diff.patch
    await checkpoints.undo(SESSION, workspace)
    assert not marker.exists()
    assert (workspace / "data.txt").read_bytes() == crlf  # no eol, ident or filter applied
    assert not (workspace / "new.txt").exists()


async def test_ignored_protected_and_oversized_files_stay_out(
    data_dir: Path, project: Path
) -> None:
    (project / ".gitignore").write_text("build/\n*.log\n")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_text("old object\n")
    private = project / ".sylk-data"
    private.mkdir()
    (private / "sylk.db").write_text("archive\n")
    checkpoints = Checkpoints(data_dir, lambda ws: Confinement.of(ws, private), max_file_bytes=1024)
    (project / "big.bin").write_bytes(b"b" * 600)  # small now: checkpointed
    await _edit(checkpoints, project, {
        "build/out.o": b"new object\n", "run.log": b"log\n", ".sylk-data/sylk.db": b"x\n",
        "big.bin": b"B" * 4096, "huge.bin": b"h" * 4096, "src/app.py": b"edited\n",
    })  # fmt: skip
    diff = await checkpoints.diff(SESSION, project)
    assert [f.path for f in diff.files] == ["src/app.py"]
    assert diff.skipped == ("big.bin", "huge.bin")
    outcome = await checkpoints.undo(SESSION, project)
    assert outcome.restored == ["src/app.py"] and outcome.skipped == ("big.bin", "huge.bin")
    # Never touched by the undo: what a checkpoint does not hold it cannot restore.
    assert (project / "build" / "out.o").read_text() == "new object\n"
    assert (project / ".sylk-data" / "sylk.db").read_text() == "x\n"
    assert (project / "big.bin").read_bytes() == b"B" * 4096
    assert (project / "huge.bin").exists()


async def test_a_link_the_turn_made_is_removed_and_its_target_kept(
    data_dir: Path, project: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    checkpoints = Checkpoints(data_dir)
    before = files_of(project)
    async with checkpoints.turn(SESSION, "engineer", project) as turn:
        await turn.before_change()
        (project / "escape").symlink_to(secret)
        (project / "src" / "app.py").unlink()
        (project / "src" / "app.py").symlink_to(secret)
    await checkpoints.undo(SESSION, project)
    assert files_of(project) == before
    assert secret.read_text() == "outside\n"


async def test_a_directory_swapped_for_a_link_after_the_turn_is_refused(
    data_dir: Path, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    checkpoints = Checkpoints(data_dir)
    await _edit(checkpoints, project, {"src/app.py": b"agent\n"})
    (project / "src" / "app.py").rename(outside / "app.py")
    (project / "src" / "util.py").rename(outside / "util.py")
    (project / "src").rmdir()
    (project / "src").symlink_to(outside)
    with pytest.raises(Exception, match="changed since"):
        await checkpoints.undo(SESSION, project)
    assert (outside / "app.py").read_text() == "agent\n"
