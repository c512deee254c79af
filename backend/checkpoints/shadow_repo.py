"""The shadow repository: a bare git repository in Sylk's data dir, one per workspace.

It is used with ``--work-tree=<workspace>`` and its own index per session, so it
works the same for git and non-git workspaces and never touches the user's own
``.git`` (index, HEAD, refs, stash, config). It lives outside the workspace, where
an agent's commands cannot reach, so they cannot tamper with the checkpoints.

A snapshot is "stage what changed, then write the tree": ``ls-files`` names what
differs from the index (the index's stat cache makes that fast after the first
time), the candidates are filtered here (``.git/``, Sylk's protected paths, nested
repositories, special files, files over the size cap), the rest goes through
``update-index`` and ``write-tree``. A file over the cap keeps the entry it had, so
a checkpoint never claims to hold what it does not.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.checkpoints.git_process import MAX_GIT_OUTPUT, GitFailedError, run_git

MAX_FILE_BYTES = 5 * 1024 * 1024
EMPTY_OID = "0" * 40

# Content goes in and out byte for byte: no line-ending, encoding or keyword
# conversion and no filter, whatever the workspace's .gitattributes ask for (this file
# outranks them). Diffs decide binary-ness by content.
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !diff !merge\n"


@dataclass(frozen=True)
class Snapshot:
    tree: str
    skipped: tuple[str, ...] = ()  # over the size cap: not in this snapshot


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees (``*_oid`` is EMPTY_OID where absent)."""

    path: str
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str

    @property
    def created(self) -> bool:
        return self.old_oid == EMPTY_OID

    @property
    def deleted(self) -> bool:
        return self.new_oid == EMPTY_OID


def repo_dir(data_dir: Path, workspace: Path) -> Path:
    key = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:20]
    return data_dir / "checkpoints" / key


def _gitignore_literal(rel: str) -> str:
    """``rel`` as an anchored .gitignore pattern matching only itself."""
    escaped = "".join("\\" + c if c in "\\*?[]!# " else c for c in rel)
    return "/" + escaped


class ShadowRepo:
    """The checkpoints of one workspace. Git calls are async; file checks run in threads."""

    def __init__(
        self,
        data_dir: Path,
        workspace: Path,
        protected: Iterable[Path] = (),
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.workspace = workspace.resolve()
        self.git_dir = repo_dir(data_dir, self.workspace)
        self.max_file_bytes = max_file_bytes
        inside: list[str] = []
        for path in protected:
            with_root = path.resolve()
            if self.workspace in with_root.parents:
                inside.append(with_root.relative_to(self.workspace).as_posix())
        self.protected = tuple(inside)  # relative to the workspace, never checkpointed
        self._ready = False

    async def git(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        limit: int = MAX_GIT_OUTPUT,
        truncate: bool = False,
        ok_codes: tuple[int, ...] = (0,),
        bare: bool = False,
    ) -> bytes:
        return await run_git(
            self.git_dir, self.workspace, list(args), index=index, stdin=stdin,
            limit=limit, truncate=truncate, ok_codes=ok_codes, bare=bare,
        )  # fmt: skip

    async def ensure(self) -> None:
        """Create the repository once (0700, its own config, excludes and attributes)."""
        if self._ready:
            return
        if not await asyncio.to_thread((self.git_dir / "HEAD").is_file):
            await asyncio.to_thread(self.git_dir.mkdir, parents=True, exist_ok=True, mode=0o700)
            await self.git("init", "--quiet", "--bare", str(self.git_dir), bare=True)
        await asyncio.to_thread(self._prepare)
        self._ready = True

    def _prepare(self) -> None:
        os.chmod(self.git_dir.parent, 0o700)
        os.chmod(self.git_dir, 0o700)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
        excludes = ["/.git", *(_gitignore_literal(rel) for rel in self.protected)]
        (info / "exclude").write_text("\n".join(excludes) + "\n", encoding="utf-8")
        (self.git_dir / "workspace").write_text(str(self.workspace) + "\n", encoding="utf-8")
        (self.git_dir / "indexes").mkdir(exist_ok=True, mode=0o700)

    def index_of(self, session_id: str) -> Path:
        return self.git_dir / "indexes" / session_id

    # -- snapshots ---------------------------------------------------------------
    async def snapshot(self, index: Path) -> Snapshot:
        """The workspace as a tree now (staged into ``index``), and what was too large."""
        await self.ensure()
        seed = self.git_dir / "indexes" / "seed"
        # A new session starts from a warm stat cache, not from hashing everything.
        await asyncio.to_thread(_seed_index, seed, index)
        listed = await self.git(
            "ls-files", "-z", "--others", "--modified", "--exclude-standard", index=index
        )
        staged, skipped = await asyncio.to_thread(self._filter, listed.split(b"\0"))
        if staged:
            await self._stage(index, b"\0".join(staged) + b"\0")
        tree = (await self.git("write-tree", index=index)).decode().strip()
        if staged:
            await asyncio.to_thread(_copy_atomic, index, seed)
        return Snapshot(tree, tuple(sorted(skipped)))

    async def _stage(self, index: Path, paths: bytes) -> None:
        """``update-index`` the paths; again with ``--replace`` (slower, several times on
        a large first snapshot) when a file took a directory's place or the reverse."""
        command = ("update-index", "--add", "--remove", "-z")
        try:
            await self.git(*command, "--stdin", index=index, stdin=paths)
        except GitFailedError as exc:
            if "file and as a directory" not in exc.message and "--add" not in exc.message:
                raise
            await self.git(*command, "--replace", "--stdin", index=index, stdin=paths)

    def _filter(self, listed: list[bytes]) -> tuple[list[bytes], list[str]]:
        staged: list[bytes] = []
        skipped: list[str] = []
        dirs: dict[bytes, bool] = {}
        root = os.fsencode(self.workspace)
        for raw in dict.fromkeys(listed):
            if not raw or raw.endswith(b"/"):
                continue  # a nested repository: its own git keeps it
            name = os.fsdecode(raw)
            parts = name.split("/")
            if ".git" in parts or self._is_protected(name):
                continue
            if not _parents_are_dirs(root, raw, dirs):
                staged.append(raw)  # behind a symlink now: git records it as gone
                continue
            try:
                info = os.lstat(root + b"/" + raw)
            except FileNotFoundError:
                staged.append(raw)
                continue
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                staged.append(raw)
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > self.max_file_bytes:
                    skipped.append(name)
                elif os.access(root + b"/" + raw, os.R_OK):
                    staged.append(raw)
        return staged, skipped

    def _is_protected(self, rel: str) -> bool:
        return any(rel == p or rel.startswith(p + "/") for p in self.protected)

    # -- reading trees and objects -----------------------------------------------------
    async def changes(self, old: str, new: str) -> list[TreeChange]:
        """Every path whose entry differs between trees ``old`` and ``new``."""
        raw = await self.git("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
        fields = raw.split(b"\0")
        found: list[TreeChange] = []
        for head, path in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            old_mode, new_mode, old_oid, new_oid, _status = head[1:].decode().split(" ")
            found.append(TreeChange(os.fsdecode(path), old_mode, new_mode, old_oid, new_oid))
        return found

    async def directories(self, tree: str) -> set[str]:
        """Every directory ``tree`` holds (git keeps no empty ones)."""
        out = await self.git("ls-tree", "-r", "-t", "-z", tree)
        found: set[str] = set()
        for record in out.split(b"\0"):
            head, _, path = record.partition(b"\t")
            if head.split(b" ")[1:2] == [b"tree"]:
                found.add(os.fsdecode(path))
        return found

    async def blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        """The contents of blobs, read in one ``cat-file --batch``."""
        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return {}
        out = await self.git("cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode())
        contents: dict[str, bytes] = {}
        at = 0
        for oid in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].decode().split(" ")
            size = int(header[2])
            contents[oid] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return contents

    async def make_tree(self, **subtrees: str) -> str:
        lines = "".join(f"040000 tree {oid}\t{name}\n" for name, oid in sorted(subtrees.items()))
        return (await self.git("mktree", stdin=lines.encode())).decode().strip()

    async def commit(self, tree: str, parent: str | None, message: str) -> str:
        args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-F", "-"]
        return (await self.git(*args, stdin=message.encode())).decode().strip()

    async def read_ref(self, ref: str) -> str | None:
        out = await self.git("rev-parse", "-q", "--verify", ref + "^{commit}", ok_codes=(0, 1))
        return out.decode().strip() or None

    async def move_ref(self, ref: str, new: str, old: str | None) -> None:
        """Point ``ref`` at ``new`` if it still points at ``old`` (None: does not exist)."""
        await self.git("update-ref", ref, new, old or EMPTY_OID)

    async def log(self, ref: str) -> list[tuple[str, str]]:
        """``(commit, message)`` along the ref's first parents, newest first."""
        out = await self.git("log", "-z", "--first-parent", "--format=%H%x1f%B", ref, "--")
        entries = []
        for record in out.split(b"\0"):
            if record.strip():
                commit, _, message = record.decode("utf-8", "replace").partition("\x1f")
                entries.append((commit.strip(), message))
        return entries

    async def patch(self, old: str, new: str, limit: int) -> bytes:
        """A unified diff of two trees, cut at ``limit`` bytes."""
        return await self.git(
            "diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-textconv",
            "--no-color", old, new, limit=limit, truncate=True,
        )  # fmt: skip


def _parents_are_dirs(root: bytes, rel: bytes, cache: dict[bytes, bool]) -> bool:
    """Whether every directory on the way to ``rel`` is a real directory (no symlink)."""
    parts = rel.split(b"/")[:-1]
    for n in range(1, len(parts) + 1):
        prefix = b"/".join(parts[:n])
        if prefix not in cache:
            try:
                cache[prefix] = stat.S_ISDIR(os.lstat(root + b"/" + prefix).st_mode)
            except OSError:
                cache[prefix] = False
        if not cache[prefix]:
            return False
    return True


def _seed_index(seed: Path, index: Path) -> None:
    if not index.exists() and seed.exists():
        _copy_atomic(seed, index)


def _copy_atomic(source: Path, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)
