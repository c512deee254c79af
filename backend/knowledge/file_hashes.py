"""Content hashes of the files in a workspace, and which paths to leave out.

A file's identity for cache invalidation is its xxHash64 content digest: a
touch, a chmod or a rewrite with the same bytes keeps the digest, so nothing
downstream is invalidated. Symlinks and special files are never hashed; a
symlink may point outside the workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

import xxhash

DEFAULT_IGNORED_NAMES: frozenset[str] = frozenset(
    {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
)
# Workspace.write_text saves through ".<name>.sylk-tmp"; the rename that follows
# is what reports the change.
DEFAULT_IGNORED_PATTERNS: tuple[str, ...] = ("*.sylk-tmp",)

_CHUNK = 1 << 20


@dataclass(frozen=True)
class IgnoreRules:
    """Which workspace-relative paths the watcher never reports.

    ``names`` match any single path component exactly; ``patterns`` are
    fnmatch patterns tried against every component and against the whole
    relative posix path (so ``build/*`` and ``*.log`` both work).
    """

    names: frozenset[str] = DEFAULT_IGNORED_NAMES
    patterns: tuple[str, ...] = DEFAULT_IGNORED_PATTERNS

    @classmethod
    def with_extra(cls, extra: Iterable[str] = ()) -> IgnoreRules:
        return cls(patterns=(*DEFAULT_IGNORED_PATTERNS, *extra))

    def ignores(self, rel: str) -> bool:
        if rel in ("", "."):
            return False
        parts = PurePosixPath(rel).parts
        if any(part in self.names for part in parts):
            return True
        for pattern in self.patterns:
            if fnmatchcase(rel, pattern) or any(fnmatchcase(p, pattern) for p in parts):
                return True
        return False


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


def iter_files(paths: WorkspacePaths, start: str, rules: IgnoreRules) -> Iterator[str]:
    """Workspace-relative paths of the regular files at or below ``start``."""
    top = paths.absolute(start) if start != "." else paths.root
    try:
        top_mode = os.lstat(top).st_mode
    except OSError:
        return
    if stat.S_ISREG(top_mode):
        if not rules.ignores(start):
            yield start
        return
    if not stat.S_ISDIR(top_mode):
        return
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        rel_dir = paths.relative(dirpath)
        if rel_dir is None:
            continue
        base = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if not rules.ignores(base + d)]
        for name in filenames:
            rel = base + name
            if not rules.ignores(rel):
                yield rel


def hash_paths(paths: WorkspacePaths, rels: Iterable[str]) -> dict[str, str | None]:
    """Current digest of each relative path (None when it is not a regular file)."""
    return {rel: hash_file(paths.absolute(rel)) for rel in rels}


def scan_workspace(root: Path, rules: IgnoreRules | None = None) -> dict[str, str]:
    """Digest of every regular, non-ignored file under ``root``."""
    paths = WorkspacePaths(root.resolve())
    rules = rules or IgnoreRules()
    found: dict[str, str] = {}
    for rel in iter_files(paths, ".", rules):
        digest = hash_file(paths.absolute(rel))
        if digest is not None:
            found[rel] = digest
    return found
