"""The typed errors of session worktrees: what went wrong, and nothing changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backend.errors import ErrorKind, SylkError


class WorktreeError(SylkError):
    """A session's worktree could not be made, read, merged or removed."""

    def failure_word(self) -> str:
        return "worktree"


class WorktreeGitError(WorktreeError):
    """A git command on the session's repository failed (its words, cut short)."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"git {what} failed: {detail.strip()[:500]}")
        self.what = what

    def failure_word(self) -> str:
        return "worktree_git_failed"


class NotIsolatedError(WorktreeError):
    """The session works in its workspace itself: there is no branch to merge."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            f"session {name!r} has no worktree of its own ({reason}); its edits are already "
            "in the workspace",
            help_hint="isolation needs a git repository with a commit on a branch",
        )


@dataclass(frozen=True)
class ConflictedFile:
    path: str
    kind: str  # git's conflict type: "content", "modify/delete", "rename/delete", ...


class MergeConflictError(WorktreeError):
    """Merging the session's branch would conflict: nothing was changed, nothing resolved."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, branch: str, base: str, files: Sequence[ConflictedFile]) -> None:
        listed = "; ".join(f"{f.path} ({f.kind})" for f in files)
        super().__init__(
            f"merging {branch} into {base} conflicts in {len(files)} file(s): {listed}. "
            "Nothing was changed",
            help_hint=f"resolve on {branch} (or merge {base} into it), then /session merge again",
            details={
                "reason": "merge_conflict",
                "branch": branch,
                "base": base,
                "files": [{"path": f.path, "kind": f.kind} for f in files],
            },
        )
        self.files = tuple(files)


class FastForwardError(WorktreeError):
    """``ff`` was asked but the base branch moved on since the session branched."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, branch: str, base: str) -> None:
        super().__init__(
            f"cannot fast-forward {base} to {branch}: {base} has commits the session's "
            "branch does not",
            help_hint="/session merge merge (a merge commit) or /session merge squash",
            details={"reason": "not_fast_forward", "branch": branch, "base": base},
        )


class DirtyCheckoutError(WorktreeError):
    """The user's checkout has the base branch out with uncommitted changes."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, root: str, base: str, files: Sequence[str]) -> None:
        shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
        super().__init__(
            f"{root} has {base} checked out with uncommitted changes ({shown}); nothing was merged",
            help_hint="commit or stash them in your checkout, then /session merge again",
            details={"reason": "dirty_checkout", "files": list(files)},
        )
