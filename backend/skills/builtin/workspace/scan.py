"""Walking a workspace the way a developer would: ignored and generated trees skipped.

Skips ``.git``, virtualenvs, ``node_modules``, caches, and (roughly) what the
top-level ``.gitignore`` names: plain name or path globs; negations (``!``) and
nested ``.gitignore`` files are not honoured. Symlinks are not followed and a
file whose real path leaves the workspace is never yielded.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from pathlib import Path

from backend.workspace.files import Workspace, WorkspaceError

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".sylk",
    }
)  # fmt: skip
MAX_TEXT_BYTES = 1024 * 1024


def gitignore_patterns(root: Path) -> list[str]:
    try:
        lines = (root / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for raw in lines:
        line = raw.strip()
        if line and not line.startswith(("#", "!")):
            out.append(line.rstrip("/").lstrip("/"))
    return out


def _ignored(name: str, rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def walk_files(ws: Workspace, start: str = ".") -> Iterator[tuple[str, Path]]:
    """(workspace-relative posix path, real path) for every kept file under ``start``."""
    base = ws.resolve(start)
    if not base.is_dir():
        raise WorkspaceError(f"{start!r} is not a directory in the workspace")
    patterns = gitignore_patterns(ws.root)
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(ws.root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not _ignored(d, f"{rel_dir}/{d}".lstrip("/"), patterns)
        )
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}".lstrip("/")
            if _ignored(name, rel, patterns):
                continue
            path = here / name
            if path.is_symlink():
                try:
                    path = ws.resolve(rel)
                except WorkspaceError:
                    continue
            yield rel, path


def glob_match(rel: str, pattern: str | None) -> bool:
    if not pattern:
        return True
    name = rel.rsplit("/", 1)[-1]
    candidates = [pattern]
    if pattern.startswith("**/"):
        candidates.append(pattern[3:])
    return any(
        fnmatch.fnmatch(rel, p) or ("/" not in p and fnmatch.fnmatch(name, p)) for p in candidates
    )


def read_text_file(path: Path) -> str | None:
    """The file's text, or None for binaries and files over 1 MiB."""
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in raw[:4096]:
        return None
    return raw.decode("utf-8", errors="replace")
