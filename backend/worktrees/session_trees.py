"""A git worktree and branch per session: made, re-opened, committed to, removed.

A session in a git repository works in ``<data_dir>/worktrees/<repo key>/<session
id>`` on the branch ``sylk/<name>-<short id>``, made from the branch the user's
checkout is on. What is known of it is a :class:`WorktreeInfo`, kept in the
session's metadata so it survives suspend, resume and a restart: the worktree is
re-opened, never made twice; one deleted by hand is made again from its branch.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from backend.worktrees.git_repo import Repository, find_repository, git, git_code, session_branch


class WorktreeInfo(BaseModel):
    """Where a session's worktree is and what it came from (``metadata["worktree"]``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    repo_root: str
    git_dir: str
    path: str  # the worktree's root
    workspace: str  # the session's workspace in it (the same sub-folder as the original)
    original_workspace: str
    branch: str
    base: str
    merged: str | None = None  # the branch tip last merged into the base

    @property
    def admin_dir(self) -> Path:
        """The worktree's own git dir inside the repository's (index, HEAD)."""
        return Path(self.git_dir) / "worktrees" / Path(self.path).name

    def ref(self, branch: str) -> str:
        return f"refs/heads/{branch}"


class SessionWorktrees:
    """Worktrees under ``root`` (the data dir's ``worktrees`` folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def create(self, workspace: Path, name: str, session_id: str) -> WorktreeInfo:
        """A new worktree on a new branch from the repository's current branch.
        :class:`~backend.worktrees.git_repo.NoRepositoryError` says why there can be none."""
        repo = await find_repository(workspace)
        path = self.root / repo.key / session_id
        info = WorktreeInfo(
            repo_root=str(repo.root),
            git_dir=str(repo.git_dir),
            path=str(path),
            workspace=str(path / workspace.relative_to(repo.root)),
            original_workspace=str(workspace),
            branch=session_branch(name, session_id[:8]),
            base=repo.branch,
        )
        # A branch left by an earlier worktree of this session is taken up, not clobbered.
        await self._add(repo, info, new_branch=not await self.has_branch(info, info.branch))
        return info

    async def _add(self, repo: Repository, info: WorktreeInfo, *, new_branch: bool) -> None:
        path = Path(info.path)
        await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True, mode=0o700)
        if await _is_there(info.admin_dir):  # registered, its folder gone: stale
            await git(repo.git_dir, repo.root, ["worktree", "prune"])
        args = ["worktree", "add", "--quiet"]
        if new_branch:
            args += ["-b", info.branch, "--", str(path), info.ref(info.base)]
        else:
            args += ["--", str(path), info.branch]
        await git(repo.git_dir, repo.root, args)

    async def reopen(self, info: WorktreeInfo) -> str | None:
        """Make sure the worktree is there; a notice when it had to be made again."""
        if await _is_there(Path(info.path, ".git")) and await _is_there(info.admin_dir):
            return None
        git_dir, root = Path(info.git_dir), Path(info.repo_root)
        await asyncio.to_thread(shutil.rmtree, info.path, True)
        await git(git_dir, root, ["worktree", "prune"])
        repo = Repository(root=root, git_dir=git_dir, branch=info.base)
        has_branch = await self.has_branch(info, info.branch)
        await self._add(repo, info, new_branch=not has_branch)
        origin = f"its branch {info.branch}" if has_branch else f"{info.base} (its branch was gone)"
        return f"the session's worktree was missing; made again from {origin} at {info.path}"

    async def has_branch(self, info: WorktreeInfo, branch: str) -> bool:
        args = ["rev-parse", "--verify", "-q", info.ref(branch)]
        return await git_code(Path(info.git_dir), None, args) == 0

    async def commit_pending(self, info: WorktreeInfo, message: str) -> bool:
        """Commit whatever the worktree holds uncommitted onto the session's branch."""
        admin, tree = info.admin_dir, Path(info.path)
        if not await _is_there(tree) or not await _is_there(admin):
            return False
        await git(admin, tree, ["add", "--all"])
        if await git_code(admin, tree, ["diff", "--cached", "--quiet"]) == 0:
            return False
        await git(admin, tree, ["-c", "commit.gpgSign=false", "commit", "-q", "-m", message])
        return True

    async def remove(self, info: WorktreeInfo, label: str) -> str:
        """Remove the worktree (its uncommitted edits committed to its branch first);
        the branch goes too once merged, else it stays and the answer says so."""
        git_dir, root = Path(info.git_dir), Path(info.repo_root)
        await self.commit_pending(info, f"Sylk session {label}: uncommitted edits at close")
        if await _is_there(Path(info.path)):
            await git(git_dir, root, ["worktree", "remove", "--force", "--", info.path])
        await git(git_dir, root, ["worktree", "prune"])
        if not await self.has_branch(info, info.branch):
            return f"removed the worktree {info.path}"
        if await self.is_merged(info):
            await git(git_dir, None, ["branch", "-D", "--", info.branch])
            return f"removed the worktree {info.path} and its merged branch {info.branch}"
        return (
            f"removed the worktree {info.path}; its unmerged work is kept on the branch "
            f"{info.branch} (merge it or delete it with git)"
        )

    async def is_merged(self, info: WorktreeInfo) -> bool:
        """The branch's tip is in the base branch, or was last merged (a squash)."""
        git_dir = Path(info.git_dir)
        tip = (await git(git_dir, None, ["rev-parse", info.ref(info.branch)])).strip()
        if info.merged == tip:
            return True
        ancestor = ["merge-base", "--is-ancestor", tip, info.ref(info.base)]
        return await git_code(git_dir, None, ancestor) == 0


async def _is_there(path: Path) -> bool:
    return await asyncio.to_thread(path.exists)
