"""Running git on the user's repository (and a session's worktree of it), safely.

The repository is untrusted: its ``.git/config`` and its ``.gitattributes`` may name
hooks, an fsmonitor, filter or merge drivers that would run a program. So every call
goes through :func:`backend.checkpoints.git_process.run_git` (no system or user
config, hooks and fsmonitor off, an allow-listed environment, a time limit), and adds
what that cannot know: every filter and merge driver the repository's config defines
is overridden on the command line so that none runs, and no attributes file outside
the tree is read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from backend.checkpoints.git_process import CheckpointError, GitFailedError, run_git
from backend.worktrees.errors import WorktreeError, WorktreeGitError

_DRIVER_KEY = re.compile(r"^(filter|merge)\.(.+)\.(clean|smudge|process|driver|required)$")
_SLUG_DROP = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Repository:
    """A git repository found above a workspace: its root, git dir and current branch."""

    root: Path
    git_dir: Path
    branch: str

    @property
    def key(self) -> str:
        """A folder name for this repository's worktrees: readable and unique per root."""
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:10]
        return f"{branch_slug(self.root.name, 24)}-{digest}"


class NoRepositoryError(WorktreeError):
    """Why a workspace cannot be isolated (not a repository, no commit, detached HEAD)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def branch_slug(name: str, limit: int = 40) -> str:
    """A session name as a branch-name part: lower-case letters, digits and dashes only,
    so no name (``../x``, ``-f``, ``a..b``, ``@{``, control characters) reaches git."""
    slug = _SLUG_DROP.sub("-", name.casefold()).strip("-")[:limit].strip("-")
    return slug or "session"


def session_branch(name: str, short_id: str) -> str:
    return f"sylk/{branch_slug(name)}-{branch_slug(short_id, 12)}"


def find_git_dir(workspace: Path) -> tuple[Path, Path] | None:
    """(root, .git dir) of the repository holding ``workspace``; None when none does.
    A ``.git`` file (a linked worktree or a submodule) is not followed: its target is
    the tree's to choose."""
    for folder in (workspace, *workspace.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return folder, marker
        if marker.exists():
            raise NoRepositoryError(f"{folder} is a linked worktree or submodule")
    return None


async def git(
    git_dir: Path,
    work_tree: Path | None,
    args: list[str],
    *,
    ok_codes: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
) -> str:
    """``git ARGS`` against ``git_dir`` (and ``work_tree``), with every driver off."""
    neutral = await _neutralisers(git_dir)
    try:
        out = await run_git(
            git_dir,
            work_tree if work_tree is not None else git_dir,
            [*neutral, *args],
            ok_codes=ok_codes,
            stdin=stdin,
            bare=work_tree is None,
        )
    except GitFailedError as exc:
        raise WorktreeGitError(args[0], str(exc).split(" failed: ", 1)[-1]) from None
    except CheckpointError as exc:
        raise WorktreeGitError(args[0], str(exc)) from None
    return out.decode("utf-8", "replace")


async def git_code(git_dir: Path, work_tree: Path | None, args: list[str]) -> int:
    """The exit code of a yes/no git question (0 or 1)."""
    try:
        await git(git_dir, work_tree, args)
    except WorktreeGitError as exc:
        if str(exc).endswith("exit code 1"):  # a "no" printed nothing on stderr
            return 1
        raise
    return 0


async def _neutralisers(git_dir: Path) -> list[str]:
    """``-c`` options that switch off each filter and merge driver the config names."""
    try:
        raw = await run_git(
            git_dir,
            git_dir,
            ["config", "-z", "--get-regexp", r"^(filter|merge)\."],
            ok_codes=(0, 1),
            bare=True,
        )
    except CheckpointError as exc:
        raise WorktreeGitError("config", str(exc)) from None
    options = ["-c", "core.attributesFile=/dev/null"]
    seen: set[tuple[str, str]] = set()
    for entry in raw.decode("utf-8", "replace").split("\0"):
        found = _DRIVER_KEY.match(entry.split("\n", 1)[0])
        if found is None or (found[1], found[2]) in seen:
            continue
        kind, name = found[1], found[2]
        seen.add((kind, name))
        if kind == "filter":  # an empty command is no filter; not required, so no failure
            options += ["-c", f"filter.{name}.clean=", "-c", f"filter.{name}.smudge="]
            options += ["-c", f"filter.{name}.process=", "-c", f"filter.{name}.required=false"]
        else:  # `false` as the driver: a file it would merge is reported as a conflict
            options += ["-c", f"merge.{name}.driver=false"]
    return options


async def find_repository(workspace: Path) -> Repository:
    """The repository holding ``workspace``, on a branch with a commit; else
    :class:`NoRepositoryError` saying why isolation cannot be."""
    found = find_git_dir(workspace)
    if found is None:
        raise NoRepositoryError("not a git repository")
    root, git_dir = found
    head = (git_dir / "HEAD").read_text("utf-8", "replace").strip()
    if not head.startswith("ref: refs/heads/"):
        raise NoRepositoryError("the repository's HEAD is detached (isolation needs a branch)")
    branch = head.removeprefix("ref: refs/heads/")
    code = await git_code(git_dir, None, ["rev-parse", "--verify", "-q", f"refs/heads/{branch}"])
    if code != 0:
        raise NoRepositoryError("the repository has no commit yet")
    return Repository(root=root, git_dir=git_dir, branch=branch)
