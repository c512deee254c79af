"""How a pipeline's work crosses to a Ray worker and back: through git, never shared files.

The driver snapshots the session's working tree as it is (committed or not, untracked
files too) into a commit on ``refs/sylk/base/<plan>/<node>`` without touching the user's
HEAD or index (a private ``GIT_INDEX_FILE``, ``add -A``, ``write-tree``, ``commit-tree``).
The worker fetches that ref into a fresh repository of its own, works there, commits and
pushes the result to ``refs/sylk/results/<plan>/<node>/<attempt>``. The driver applies
base..result to the working tree once (``refs/sylk/applied/...`` records that it did).

The repository is untrusted on both sides: every call goes through the worktree room's
safe git (no hooks, fsmonitor, filters or merge drivers, no user or system config), and
the other side of a fetch or push runs ``upload-pack``/``receive-pack`` with hooks off
too (a local transport clears ``-c`` options for the remote side, so they are named on
its command line), so a hook planted in the session's repository never runs.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from backend.checkpoints.git_process import CheckpointError, run_git
from backend.cluster.errors import ApplyConflictError, NotARepositoryError
from backend.worktrees.errors import WorktreeGitError
from backend.worktrees.git_repo import NoRepositoryError, branch_slug, find_git_dir, git

# The remote side of a fetch or push (a local path: a child git process) with hooks off.
UPLOAD_PACK = "git -c core.hooksPath=/dev/null upload-pack"
RECEIVE_PACK = "git -c core.hooksPath=/dev/null -c receive.denyCurrentBranch=refuse receive-pack"
# What checks and tools leave in a tree (bytecode, caches, coverage data) is never the
# pipeline's work: two results carrying the same ``pkg/__pycache__/x.pyc`` would not both
# apply. Kept out of the base and of every result whatever the repository's .gitignore
# says, without touching that file or the user's config ("dir/" names a directory).
LEFTOVERS = (
    "__pycache__/", "*.py[cod]", ".pytest_cache/", ".ruff_cache/", ".mypy_cache/",
    ".hypothesis/", ".tox/", ".nox/", "htmlcov/", ".coverage", ".coverage.*", "coverage.xml",
)  # fmt: skip


EXCLUDES = "".join(f"{name}\n" for name in LEFTOVERS)  # an excludes file's lines

Run = Callable[[list[str]], Awaitable[str]]


async def add_all_but_leftovers(run: Run, head: str | None, excludes: Path) -> None:
    """``add -A`` minus :data:`LEFTOVERS` (``excludes`` holds them): untracked ones are
    ignored, tracked ones (the repository committed some) stay as ``head`` has them.
    (Safe git takes pathspecs literally, so no exclude pathspec: an excludes file.)"""
    await run(["-c", f"core.excludesFile={excludes}", "add", "-A", "--", "."])
    listed = await run(["ls-files", "-z", "-c", "-i", f"--exclude-from={excludes}"])
    if tracked := [name for name in listed.split("\0") if name]:
        await run(["reset", "-q", head, "--", *tracked] if head
                  else ["rm", "-q", "--cached", "--", *tracked])  # fmt: skip


@dataclass(frozen=True)
class SessionRepository:
    """The repository holding a session's workspace: where refs go, what to apply to."""

    root: Path
    git_dir: Path
    workspace: Path

    @property
    def subdir(self) -> str:
        """The workspace's path inside the repository ('' at its root)."""
        rel = self.workspace.relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def in_workspace(self, paths: list[str]) -> list[str]:
        """Repository paths as the workspace names them (those outside it left out)."""
        prefix = f"{self.subdir}/" if self.subdir else ""
        return [p.removeprefix(prefix) for p in paths if p.startswith(prefix)]


def node_ref_part(plan_id: str, node_id: str) -> str:
    """``<plan>/<node>`` as safe ref components (ids are the plan's: never trusted raw)."""
    return f"{branch_slug(plan_id)}/{branch_slug(node_id)}"


def node_key(session_id: str, plan_id: str, node_json: str) -> str:
    """One node *as planned* (a revised node is another key): what is applied once."""
    return hashlib.sha256(f"{session_id}\0{plan_id}\0{node_json}".encode()).hexdigest()[:16]


def session_repository(workspace: Path) -> SessionRepository:
    """The repository above ``workspace``; a linked worktree's ``.git`` file is followed
    to its git dir (refs are shared with the main repository)."""
    try:
        found = find_git_dir(workspace)
    except NoRepositoryError:  # a .git file: a linked worktree (a session's isolation)
        found = _linked_worktree(workspace)
    if found is None:
        raise NotARepositoryError(workspace)
    return SessionRepository(root=found[0], git_dir=found[1], workspace=workspace)


def _linked_worktree(workspace: Path) -> tuple[Path, Path] | None:
    for folder in (workspace, *workspace.parents):
        marker = folder / ".git"
        if marker.is_file():
            text = marker.read_text("utf-8", "replace").strip()
            if text.startswith("gitdir: "):
                target = Path(text.removeprefix("gitdir: "))
                target = target if target.is_absolute() else (folder / target).resolve()
                return (folder, target) if target.is_dir() else None
        if marker.exists():
            return None
    return None


async def snapshot_base(repo: SessionRepository, ref: str) -> str:
    """Commit the working tree as it is to ``ref``; the user's HEAD and index untouched."""
    with tempfile.TemporaryDirectory(prefix="sylk-base-") as scratch:
        index = Path(scratch) / "index"
        head = (await git(repo.git_dir, repo.root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"],
                          ok_codes=(0, 1))).strip()  # fmt: skip
        if head:
            await _indexed(repo, index, ["read-tree", head])
        (Path(scratch) / "exclude").write_text(EXCLUDES)
        await add_all_but_leftovers(
            lambda args: _indexed(repo, index, args), head or None, Path(scratch) / "exclude"
        )
        tree = (await _indexed(repo, index, ["write-tree"])).strip()
    parents = ["-p", head] if head else []
    message = f"sylk: base of {ref}\n".encode()
    sha = (await _indexed(repo, None, ["commit-tree", tree, *parents], stdin=message)).strip()
    await git(repo.git_dir, repo.root, ["update-ref", ref, sha])
    return sha


async def _indexed(
    repo: SessionRepository, index: Path | None, args: list[str], stdin: bytes | None = None
) -> str:
    """Safe git on the session's repository with a private index file."""
    try:
        out = await run_git(repo.git_dir, repo.root, [*NEUTRAL, *args], index=index, stdin=stdin)
    except CheckpointError as exc:
        raise WorktreeGitError(args[0], str(exc)) from None
    return out.decode("utf-8", "replace")


# ``git()`` names every filter and merge driver the config defines; ``add`` with a private
# index must not run a clean filter either: attributes from the tree are not read at all.
NEUTRAL = ["-c", "core.attributesFile=/dev/null", "-c", "filter.lfs.process="]


async def ref_sha(repo: SessionRepository, ref: str) -> str | None:
    out = await git(repo.git_dir, repo.root, ["rev-parse", "-q", "--verify", ref], ok_codes=(0, 1))
    return out.strip() or None


async def count_refs(repo: SessionRepository, prefix: str) -> int:
    out = await git(repo.git_dir, repo.root, ["for-each-ref", "--format=%(refname)", prefix])
    return len(out.split())


async def commit_message(repo: SessionRepository, sha: str) -> str:
    return await git(repo.git_dir, repo.root, ["log", "-1", "--format=%B", sha])


async def apply_result(repo: SessionRepository, base: str, result: str, applied_ref: str) -> None:
    """base..result onto the working tree, all or nothing; then ``applied_ref`` says so.
    A hunk that no longer fits (the file changed since the base) is an
    :class:`ApplyConflictError` naming the files, and nothing is written."""
    patch = await git(repo.git_dir, repo.root, ["diff", "--binary", "--no-ext-diff", base, result])
    if patch.strip():
        try:
            await run_git(repo.git_dir, repo.root, ["apply", "--whitespace=nowarn", "-"],
                          stdin=patch.encode())  # fmt: skip
        except CheckpointError as exc:
            files = await changed_files(repo.git_dir, repo.root, base, result)
            raise ApplyConflictError(files, str(exc)) from None
    await git(repo.git_dir, repo.root, ["update-ref", applied_ref, result])


async def holds_result(repo: SessionRepository, base: str, result: str) -> bool:
    """The working tree still holds base..result (it reverses cleanly, or is empty)."""
    patch = await git(repo.git_dir, repo.root, ["diff", "--binary", "--no-ext-diff", base, result])
    if not patch.strip():
        return True
    try:
        await run_git(repo.git_dir, repo.root, ["apply", "-R", "--check", "-"],
                      stdin=patch.encode())  # fmt: skip
    except CheckpointError:
        return False
    return True


async def changed_files(git_dir: Path, work_tree: Path, base: str, result: str) -> list[str]:
    out = await git(git_dir, work_tree, ["diff", "--name-only", "-z", base, result])
    return [name for name in out.split("\0") if name]


# -- the worker's side ------------------------------------------------------------------
async def fetch_checkout(source: Path, base_ref: str, checkout: Path) -> str:
    """A fresh repository at ``checkout`` holding the base commit, checked out detached."""
    checkout.mkdir(parents=True)  # noqa: ASYNC240 (a new folder: no wait worth a thread)
    git_dir = checkout / ".git"
    try:
        await run_git(git_dir, checkout, ["init", "-q", "--template="])  # no sample hooks
    except CheckpointError as exc:
        raise WorktreeGitError("init", str(exc)) from None
    # The checkout is the worker's own: its ``git status`` (an agent's too) hides them.
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text(EXCLUDES)
    await git(git_dir, checkout, ["fetch", "-q", "--no-tags", f"--upload-pack={UPLOAD_PACK}",
                                  str(source), f"{base_ref}:refs/sylk/base"])  # fmt: skip
    await git(git_dir, checkout, ["checkout", "-q", "--detach", "refs/sylk/base"])
    return (await git(git_dir, checkout, ["rev-parse", "refs/sylk/base"])).strip()


async def commit_and_push(checkout: Path, message: str, source: Path, result_ref: str) -> str:
    """Commit what the pipeline left in the checkout (not :data:`LEFTOVERS`, even where
    the base tracks them); push it to ``result_ref``."""
    git_dir = checkout / ".git"
    await add_all_but_leftovers(lambda args: git(git_dir, checkout, args), "refs/sylk/base",
                                git_dir / "info" / "exclude")  # fmt: skip
    await git(git_dir, checkout, ["commit", "-q", "--allow-empty", "--no-verify", "-m",
                                  message or "sylk: pipeline result"])  # fmt: skip
    sha = (await git(git_dir, checkout, ["rev-parse", "HEAD"])).strip()
    await git(git_dir, checkout, ["push", "-q", "--force", "--no-verify",
                                  f"--receive-pack={RECEIVE_PACK}", str(source),
                                  f"{sha}:{result_ref}"])  # fmt: skip
    return sha
