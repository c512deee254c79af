"""Why an agent's own ``git`` fails in a session's worktree, said plainly.

A session's worktree has a ``.git`` *file* (``gitdir: <repo>/.git/worktrees/<id>``):
its index, HEAD and the repository's objects, refs, config and hooks all live in the
user's repository, outside the session's workspace. The sandbox lets a command write
only the workspace (and never a ``.git`` in it, nor the ``.git`` file), so an agent's
``git status``, ``git commit`` or ``git config`` there fails with git's own words
("not a git repository", "Unable to create ... index.lock", "could not lock config
file"). That is the point: nothing an agent runs can write the user's ``.git/config``
or ``.git/hooks``. This module turns git's words into the way forward: Sylk commits a
session's edits itself, and the user brings them home with ``/session merge``.
"""

from __future__ import annotations

import re
from pathlib import Path

# git's words when it cannot read or write the repository behind a worktree.
_DENIED = re.compile(
    r"not a git repository"
    r"|unable to create '[^']*\.lock'"
    r"|could not lock config file"
    r"|unable to write new index file"
    r"|insufficient permission for adding an object"
    r"|cannot lock ref"
    r"|\.git/[^\s:]*: (?:permission denied|read-only file system)",
    re.IGNORECASE,
)


def worktree_gitdir(workspace: Path) -> Path | None:
    """The admin dir a linked worktree's ``.git`` file names, for ``workspace`` or the
    nearest folder above it holding a ``.git``; None when that is no such file."""
    for folder in (workspace, *workspace.parents):
        dot = folder / ".git"
        if dot.is_symlink() or dot.is_dir():
            return None
        if dot.is_file():
            try:
                pointer = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not pointer.startswith("gitdir:"):
                return None
            return (folder / pointer.removeprefix("gitdir:").strip()).resolve()
    return None


def sandboxed_git_hint(workspace: Path, output: str) -> str | None:
    """What to tell an agent whose command's ``output`` shows git denied in a session's
    worktree (None when it does not, or the workspace is no linked worktree)."""
    if not _DENIED.search(output):
        return None
    gitdir = worktree_gitdir(workspace)
    if gitdir is None or gitdir.parent.name != "worktrees":
        return None
    return (
        "git cannot change this session's repository from the sandbox: the session works "
        "in its own git worktree, whose repository (.git, its config and hooks) lies "
        "outside what a command may write. Edit the files only; Sylk commits them to the "
        "session's branch itself, and the user merges it back with "
        "/session merge [ff|merge|squash]."
    )
