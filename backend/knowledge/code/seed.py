"""A new worktree's code index, seeded from the index of the tree it was made from.

A per-session worktree holds (nearly) the same files as its base tree, so indexing
it from scratch re-parses thousands of identical files. :func:`seed_index_from`
copies the base tree's index file (SQLite's online backup: consistent while the
base index is being written) to the worktree's index path, then runs an ordinary
incremental build there. Rows are keyed by root-relative paths, so the copy is
valid as it stands; the build reads and hashes each file (a fresh checkout has new
mtimes) and re-parses only those whose content hash differs from the base's, adds
the new ones and drops the gone ones. No git runs here, so nothing a repository
plants (hooks, ``core.fsmonitor``) can run either.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.index_db import SCHEMA_VERSION, CodeIndexError
from backend.knowledge.code.live import index_path_for


@dataclass(frozen=True, slots=True)
class SeedStats:
    """What seeding did: ``seeded`` is False when there was no base index to copy (or
    the worktree already had its own) and the build below was all there was."""

    seeded: bool
    files: int
    reindexed: tuple[str, ...]
    removed: int
    seconds: float


def _has_index(db_path: Path) -> bool:
    if not db_path.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            return bool(
                version == SCHEMA_VERSION
                and conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
            )
    except sqlite3.Error:
        return False


def copy_index(base_db: Path, new_db: Path) -> None:
    """Copy the index file ``base_db`` to ``new_db`` (private, 0600) atomically."""
    new_db.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(new_db.parent, 0o700)
    partial = new_db.with_name(new_db.name + ".seeding")
    for stale in (partial, *(Path(f"{new_db}{s}") for s in ("-wal", "-shm", "-journal"))):
        stale.unlink(missing_ok=True)
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    try:
        with (
            contextlib.closing(sqlite3.connect(f"file:{base_db}?mode=ro", uri=True)) as src,
            contextlib.closing(sqlite3.connect(partial)) as dst,
        ):
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one file to move; WAL again on open
        os.replace(partial, new_db)
    except (OSError, sqlite3.Error) as exc:
        partial.unlink(missing_ok=True)
        raise CodeIndexError(f"could not copy the index {base_db} to {new_db}: {exc}") from exc


def seed_index_from(
    base_root: Path,
    new_root: Path,
    data_dir: Path,
    *,
    protected: tuple[Path, ...] | None = None,
) -> SeedStats:
    """Give the tree at ``new_root`` (a worktree of ``base_root``'s repository) its index
    under ``data_dir``, copied from ``base_root``'s and brought up to date.

    Blocking (run it in a thread), and before the hub opens ``new_root``: the files
    whose content equals the base tree's are never re-parsed. Without a base index,
    or when ``new_root`` already has one (a resumed worktree), this is a plain
    incremental build. ``protected`` defaults to ``(data_dir,)``, as the hub's.
    """
    started = time.perf_counter()
    new_db = index_path_for(data_dir, new_root)
    base_db = index_path_for(data_dir, base_root)
    seeded = False
    if not _has_index(new_db) and _has_index(base_db):
        copy_index(base_db, new_db)
        seeded = True
    guarded = protected if protected is not None else (data_dir,)
    index = CodeIndex(new_root, new_db, protected=guarded)
    try:
        stats = index.build()
    finally:
        index.close()
    return SeedStats(
        seeded, stats.files, stats.reindexed, stats.removed, time.perf_counter() - started
    )
