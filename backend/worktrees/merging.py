"""Merging a session's branch back into its base: conflicts found before anything moves.

``git merge-tree --write-tree`` merges in the object store only, so a conflict is
reported file by file (with git's kind for it) while no tree, index or ref has
changed; nothing is ever resolved silently. Without conflicts the base branch moves:
through the user's checkout when it has the base out and is clean (a two-tree
read-tree that refuses to overwrite anything), else by its ref alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend.worktrees.errors import (
    ConflictedFile,
    DirtyCheckoutError,
    FastForwardError,
    MergeConflictError,
)
from backend.worktrees.git_repo import git, git_code
from backend.worktrees.session_trees import SessionWorktrees, WorktreeInfo

MergeMode = Literal["ff", "merge", "squash"]
MERGE_MODES: tuple[MergeMode, ...] = ("ff", "merge", "squash")
_KIND = re.compile(r"^CONFLICT \((.+)\)$")


@dataclass(frozen=True)
class MergeOutcome:
    mode: MergeMode | Literal["none"]
    branch: str
    base: str
    commit: str | None  # the base's new tip; None when there was nothing to merge
    branch_tip: str
    through_checkout: bool = False

    def text(self) -> str:
        if self.commit is None:
            return f"nothing to merge: {self.base} already has everything on {self.branch}"
        how = {"ff": "fast-forwarded", "merge": "merged", "squash": "squashed"}[self.mode]
        where = "your checkout updated" if self.through_checkout else "branch ref updated"
        return f"{how} {self.branch} into {self.base} at {self.commit[:10]} ({where})"


def conflicts_from(output: str) -> list[ConflictedFile]:
    """The conflicted files of ``merge-tree --write-tree -z --name-only`` output."""
    fields = output.split("\0")
    names: list[str] = []
    at = 1
    while at < len(fields) and fields[at]:
        names.append(fields[at])
        at += 1
    kinds: dict[str, str] = {}
    at += 1
    while at < len(fields) and fields[at].isdigit():
        count = int(fields[at])
        paths = fields[at + 1 : at + 1 + count]
        kind = _KIND.match(fields[at + 1 + count] if at + 1 + count < len(fields) else "")
        if kind is not None:
            for path in paths:
                kinds.setdefault(path, kind[1])
        at += count + 3
    unique = dict.fromkeys(names)
    return [ConflictedFile(path=name, kind=kinds.get(name, "conflict")) for name in unique]


async def merge_branch(
    trees: SessionWorktrees, info: WorktreeInfo, mode: MergeMode, label: str
) -> MergeOutcome:
    """Merge the session's branch into its base with ``mode`` (the worktree's
    uncommitted edits committed first, in a commit naming the session)."""
    git_dir = Path(info.git_dir)
    await trees.commit_pending(info, f"Sylk session {label}: uncommitted edits")
    base_ref, branch_ref = info.ref(info.base), info.ref(info.branch)
    base = (await git(git_dir, None, ["rev-parse", "--verify", base_ref])).strip()
    tip = (await git(git_dir, None, ["rev-parse", "--verify", branch_ref])).strip()
    if await git_code(git_dir, None, ["merge-base", "--is-ancestor", tip, base]) == 0:
        return MergeOutcome("none", info.branch, info.base, None, tip)
    fast = await git_code(git_dir, None, ["merge-base", "--is-ancestor", base, tip]) == 0
    if mode == "ff" and not fast:
        raise FastForwardError(info.branch, info.base)
    merged = await git(
        git_dir,
        None,
        ["merge-tree", "--write-tree", "-z", "--name-only", base, tip],
        ok_codes=(0, 1),
    )
    conflicts = conflicts_from(merged)
    if conflicts:
        raise MergeConflictError(info.branch, info.base, conflicts)
    tree = merged.split("\0", 1)[0].strip()
    if mode == "ff":
        new = tip
    elif mode == "merge":
        message = f"Merge Sylk session {label} ({info.branch}) into {info.base}"
        args = ["commit-tree", tree, "-p", base, "-p", tip, "-m", message]
        new = (await git(git_dir, None, args)).strip()
    else:
        message = f"Sylk session {label}: its work on {info.branch}, squashed"
        new = (await git(git_dir, None, ["commit-tree", tree, "-p", base, "-m", message])).strip()
    through = await _move_base(info, base, new)
    return MergeOutcome(mode, info.branch, info.base, new, tip, through_checkout=through)


async def _move_base(info: WorktreeInfo, old: str, new: str) -> bool:
    """Point the base branch at ``new``; True when the user's checkout was updated too."""
    git_dir, root = Path(info.git_dir), Path(info.repo_root)
    head = (git_dir / "HEAD").read_text("utf-8", "replace").strip()
    checked_out = head == f"ref: {info.ref(info.base)}"
    if checked_out:
        status = await git(
            git_dir, root, ["status", "--porcelain=v1", "-z", "--untracked-files=no"]
        )
        dirty = sorted({entry[3:] for entry in status.split("\0") if len(entry) > 3})
        if dirty:
            raise DirtyCheckoutError(info.repo_root, info.base, dirty)
        # Refuses (nothing changed) if it would overwrite an untracked file.
        await git(git_dir, root, ["read-tree", "-m", "-u", old, new])
    await git(
        git_dir, None, ["update-ref", "-m", "sylk: session merge", info.ref(info.base), new, old]
    )
    return checked_out
