"""Walking a workspace the way a developer would: ignored and generated trees skipped.

Skips ``.git``, virtualenvs, ``node_modules``, caches, and (roughly) what the
top-level ``.gitignore`` names: plain name or path globs; negations (``!``) and
nested ``.gitignore`` files are not honoured. The walk is the workspace's own
(:meth:`~backend.workspace.files.Workspace.walk_files`): directories opened by
descriptor, never through a link, Sylk's own data left out; a file is read back
through the workspace too, so a name swapped for a link meanwhile leads nowhere.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from backend.workspace.files import Workspace, WorkspaceError

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".sylk",
    }
)  # fmt: skip
MAX_TEXT_BYTES = 1024 * 1024


def gitignore_patterns(ws: Workspace) -> list[str]:
    try:
        text = ws.read_text(".gitignore")
    except WorkspaceError:
        return []
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "!")):
            out.append(line.rstrip("/").lstrip("/"))
    return out


def _ignored(name: str, rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def walk_files(ws: Workspace, start: str = ".") -> Iterator[str]:
    """The workspace-relative posix path of every kept file under ``start``."""
    patterns = gitignore_patterns(ws)

    def keep(rel: str, name: str) -> bool:
        return name not in SKIP_DIRS and not _ignored(name, rel, patterns)

    for rel in ws.walk_files(start, keep):
        if not _ignored(rel.rsplit("/", 1)[-1], rel, patterns):
            yield rel


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


def read_text_file(ws: Workspace, rel: str) -> str | None:
    """The file's text, or None for binaries, files over 1 MiB and anything refused."""
    try:
        raw = ws.read_bytes(rel, MAX_TEXT_BYTES)
    except WorkspaceError:
        return None
    if b"\x00" in raw[:4096]:
        return None
    return raw.decode("utf-8", errors="replace")
