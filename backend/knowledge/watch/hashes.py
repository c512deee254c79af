"""Content hashes of the files in a workspace.

A file's identity for cache invalidation is its xxHash64 content digest: a
touch, a chmod or a rewrite with the same bytes keeps the digest, so nothing
downstream is invalidated. Symlinks and special files are never hashed; a
symlink may point outside the workspace. Which files are hashed at all is the
workspace's :class:`~backend.knowledge.watch.ignore.IgnorePolicy`, the code
index's own.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import xxhash

from backend.knowledge.watch.ignore import IgnorePolicy

_CHUNK = 1 << 20


@dataclass
class WorkspacePaths:
    """Converts between absolute paths and workspace-relative posix paths."""

    root: Path
    _prefix: str = field(init=False)

    def __post_init__(self) -> None:
        self._prefix = os.fspath(self.root) + os.sep

    def relative(self, absolute: str) -> str | None:
        """The workspace-relative posix path, or None when outside the root."""
        if absolute == os.fspath(self.root):
            return "."
        if not absolute.startswith(self._prefix):
            return None
        return PurePosixPath(Path(absolute[len(self._prefix) :])).as_posix()

    def absolute(self, rel: str) -> Path:
        return self.root.joinpath(*PurePosixPath(rel).parts)


def hash_file(path: Path) -> str | None:
    """The xxHash64 digest of a regular file, or None if it is missing or not one."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        hasher = xxhash.xxh64()
        while chunk := os.read(fd, _CHUNK):
            hasher.update(chunk)
        return hasher.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def scan_workspace(root: Path, policy: IgnorePolicy | None = None) -> dict[str, str]:
    """Digest of every regular file under ``root`` that ``policy`` keeps."""
    paths = WorkspacePaths(root.resolve())
    policy = policy if policy is not None else IgnorePolicy(paths.root)
    found: dict[str, str] = {}
    for rel, _ in policy.view().walk():
        digest = hash_file(paths.absolute(rel))
        if digest is not None:
            found[rel] = digest
    return found


def hash_candidates(  # noqa: PLR0917 - one call site, every argument a different thing
    paths: WorkspacePaths,
    policy: IgnorePolicy,
    candidates: set[str],
    dirs: set[str],
    bases: set[str],
    below: dict[str, str],
) -> dict[str, str | None]:
    """Current digest of each candidate; None for one that is gone, not a regular
    file, or left out by the ignore policy (a known one then leaves the known set).

    Each of ``dirs`` adds the files the walk finds below it. Under each of ``bases``
    (where an ignore file changed) the tree is walked again: a known file it now
    hides leaves, a file it now shows is hashed and arrives, and ``below`` (the
    known files there that had no event of their own) keep their digests without
    being read again.
    """
    ignore = policy.view()
    for rel in dirs:
        candidates.update(r for r, _ in ignore.walk(rel))
    current: dict[str, str | None] = {
        rel: None if ignore.ignores(rel) else hash_file(paths.absolute(rel)) for rel in candidates
    }
    for rel, digest in below.items():
        current[rel] = None if ignore.ignores(rel) else digest
    for base in bases:
        for rel, _ in ignore.walk(base):
            if rel not in current:
                current[rel] = hash_file(paths.absolute(rel))
    return current
