"""The hunks a worktree changed in a file, against the base commit it was made from.

Worktrees of one repository share their base, so their hunks are comparable in the
base's line numbers, as a merge would compare them. The base text is read with
``git cat-file`` from the repository's objects (git run as the checkpoints run it: no
system or user config, no hooks, no fsmonitor; ``cat-file`` without ``--filters``
applies no attribute filters or textconv a planted ``.gitattributes`` could name);
the worktree's text is read through :class:`~backend.workspace.files.Workspace`, so a
planted link cannot point the read outside. Anything unreadable means "no line
information", never an error for the write that asked.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from difflib import SequenceMatcher
from pathlib import Path

from backend.checkpoints.git_process import run_git
from backend.errors import SylkError
from backend.resources.line_owners import Span
from backend.workspace.files import Workspace

MAX_DIFF_BYTES = 2 * 1024 * 1024
_BASE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./@^~-]{0,200}")
_Range = tuple[int, int]  # base lines, 0-based, half-open; an insertion covers one line


def text_lines(data: bytes | None) -> list[str] | None:
    """The lines of a text file, or None for binary or undecodable content."""
    if data is None or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def changed_ranges(base: list[str], now: list[str]) -> list[_Range]:
    ranges: list[_Range] = []
    matcher = SequenceMatcher(None, base, now, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            ranges.append((i1, max(i2, i1 + 1)))
    return ranges


def overlap(ours: list[_Range], theirs: list[_Range]) -> Span | None:
    """The span (1-based, base numbering) covering every place the two sets overlap."""
    found: Span | None = None
    for s1, e1 in ours:
        for s2, e2 in theirs:
            start, end = max(s1, s2), min(e1, e2)
            if start < end:
                span = (start + 1, end)
                found = span if found is None else (min(found[0], span[0]), max(found[1], span[1]))
    return found


def _git_dir(repo: Path) -> Path | None:
    candidate = repo / ".git"
    return candidate if candidate.is_dir() and not candidate.is_symlink() else None


BASE_CACHE_FILES = 256
"""Files of base commits kept read: a commit never changes, and with many sessions on one
file every write compares against every other session's base (two git processes each)."""
_base_cache: OrderedDict[tuple[Path, str, str], list[str] | None] = OrderedDict()


async def base_lines(repo: Path, base: str, rel: str) -> list[str] | None:
    """``rel`` as it is in commit ``base`` of ``repo`` ([] if it is not there), or None."""
    key = (repo, base, rel)
    if key in _base_cache:
        _base_cache.move_to_end(key)
        return _base_cache[key]
    lines = await _read_base(repo, base, rel)
    _base_cache[key] = lines
    if len(_base_cache) > BASE_CACHE_FILES:
        _base_cache.popitem(last=False)
    return lines


async def _read_base(repo: Path, base: str, rel: str) -> list[str] | None:
    git_dir = _git_dir(repo)
    if git_dir is None or not _BASE.fullmatch(base) or ":" in base:
        return None
    try:
        kind = await run_git(git_dir, repo, ["cat-file", "-t", f"{base}:{rel}"], ok_codes=(0, 128))
        if kind.strip() != b"blob":
            return [] if not kind.strip() else None
        data = await run_git(
            git_dir, repo, ["cat-file", "blob", f"{base}:{rel}"], limit=MAX_DIFF_BYTES
        )
    except SylkError:
        return None
    return text_lines(data)


def worktree_lines(root: Path, rel: str) -> list[str] | None:
    """``rel`` in the worktree at ``root`` ([] if it is gone), read confined; None if unreadable."""
    try:
        with Workspace(root) as ws:
            if ws.stat(rel) is None:
                return []
            return text_lines(ws.read_bytes(rel, limit=MAX_DIFF_BYTES))
    except (SylkError, OSError):
        return None


async def worktree_ranges(repo: Path, root: Path, base: str, rel: str) -> list[_Range] | None:
    """The hunks of ``rel`` in the worktree ``root`` against ``base``, or None if unknown."""
    before = await base_lines(repo, base, rel)
    now = await asyncio.to_thread(worktree_lines, root, rel)
    if before is None or now is None:
        return None
    return changed_ranges(before, now)
