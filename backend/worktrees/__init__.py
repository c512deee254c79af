"""A git worktree and branch per session, and merging them back.

- ``git_repo``: git on the user's (untrusted) repository with hooks, fsmonitor and
  every filter or merge driver off; finding the repository above a workspace.
- ``session_trees``: :class:`SessionWorktrees` makes, re-opens, commits to and removes
  a session's worktree; :class:`WorktreeInfo` is what a session keeps of it.
- ``merging``: :func:`merge_branch`, ``ff``, ``merge`` or ``squash``, with conflicts
  found by ``git merge-tree`` before anything moves.
- ``errors``: the typed errors (a conflict lists each file and its kind).
"""

from backend.worktrees.errors import (
    ConflictedFile,
    DirtyCheckoutError,
    FastForwardError,
    MergeConflictError,
    NotIsolatedError,
    WorktreeError,
    WorktreeGitError,
)
from backend.worktrees.git_repo import NoRepositoryError, branch_slug, session_branch
from backend.worktrees.merging import MERGE_MODES, MergeMode, MergeOutcome, merge_branch
from backend.worktrees.session_trees import SessionWorktrees, WorktreeInfo

__all__ = [
    "MERGE_MODES",
    "ConflictedFile",
    "DirtyCheckoutError",
    "FastForwardError",
    "MergeConflictError",
    "MergeMode",
    "MergeOutcome",
    "NoRepositoryError",
    "NotIsolatedError",
    "SessionWorktrees",
    "WorktreeError",
    "WorktreeGitError",
    "WorktreeInfo",
    "branch_slug",
    "merge_branch",
    "session_branch",
]
