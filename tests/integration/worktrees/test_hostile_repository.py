"""An attacker's repository: hooks, an fsmonitor, a hooks path, filter and merge drivers
planted in ``.git`` and ``.gitattributes``. Making a worktree, committing to it, merging
it back and removing it never run any of them. Real git, real files."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from backend.worktrees import (
    MergeConflictError,
    SessionWorktrees,
    branch_slug,
    merge_branch,
    session_branch,
)
from tests.support.git_repos import git, make_repo

TRAPS = (
    "post-checkout",
    "pre-commit",
    "commit-msg",
    "post-commit",
    "post-merge",
    "reference-transaction",
)


def put(folder: str, name: str, text: str) -> None:
    Path(folder, name).write_text(text)


def plant(repo: Path, proof: Path) -> None:
    """Every way a repository can make git run a program, each leaving ``proof``."""
    trap = f'#!/bin/sh\necho "$0" >> {proof}\n'
    hooks = repo / "elsewhere-hooks"
    hooks.mkdir()
    for folder in (repo / ".git" / "hooks", hooks):
        for name in TRAPS:
            path = folder / name
            path.write_text(trap)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monitor = repo / "monitor.sh"
    monitor.write_text(trap)
    monitor.chmod(0o755)
    (repo / ".gitattributes").write_text("* filter=evil merge=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    with (repo / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {monitor}\n"
            f'[filter "evil"]\n\tsmudge = "sh -c \'echo smudge >> {proof}; cat\'"\n'
            f"\tclean = \"sh -c 'echo clean >> {proof}; cat'\"\n\trequired = true\n"
            f"[merge \"evil\"]\n\tdriver = sh -c 'echo merge >> {proof}' %O %A %B\n"
        )


async def test_planted_hooks_fsmonitor_filters_and_merge_drivers_never_run(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    proof = tmp_path / "ran"
    plant(repo, proof)
    trees = SessionWorktrees(tmp_path / "data" / "worktrees")
    info = await trees.create(repo, "attack", "0123456789abcdef")
    other = await trees.create(repo, "other", "fedcba9876543210")
    put(info.workspace, "a.txt", "a changed\n")
    put(other.workspace, "b.txt", "b changed\n")
    await merge_branch(trees, info, "ff", "attack")
    await merge_branch(trees, other, "merge", "other")  # a real three-way merge
    put(info.workspace, "a.txt", "left\n")
    put(other.workspace, "a.txt", "right\n")
    await merge_branch(trees, info, "merge", "attack")
    with pytest.raises(MergeConflictError):  # the driver is off: reported, never run
        await merge_branch(trees, other, "merge", "other")
    await trees.remove(info, "attack")
    await trees.remove(other, "other")
    assert not proof.exists(), proof.read_text()
    assert (repo / "a.txt").read_text() == "left\n"  # the checkout was updated ...
    assert (repo / "b.txt").read_text() == "b changed\n"  # ... without any filter


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "-f --force",
        "a..b",
        "x@{1}",
        "refs/heads/main",
        "wt\x00\x1b[31m",
        "",
        "...",
    ],
)
def test_a_hostile_session_name_becomes_a_plain_branch_name(name: str) -> None:
    branch = session_branch(name, "0123abcd")
    slug = branch.removeprefix("sylk/")
    assert branch.startswith("sylk/") and set(slug) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")
    assert not slug.startswith("-") and ".." not in branch and "@{" not in branch
    assert branch_slug(name) in branch


async def test_a_hostile_session_name_makes_a_valid_branch_in_a_real_repository(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    trees = SessionWorktrees(tmp_path / "data" / "worktrees")
    info = await trees.create(repo, "--upload-pack=touch /tmp/x ../../HEAD", "0123456789")
    branches = git(repo, "branch", "--format=%(refname:short)").split()
    assert info.branch in branches and info.branch.startswith("sylk/upload-pack-touch-tmp-x")
