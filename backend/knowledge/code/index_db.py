"""The code index's SQLite file: its schema, per-thread connections and one writer.

A sidecar cache of the workspace at ``root``, rebuildable at any time. Rows are
keyed by paths relative to the root (:meth:`IndexDatabase._rel`), and a symbol's
``norm`` column holds :func:`norm_name` of its name. One writer at a time holds
:meth:`IndexDatabase._transaction`; every thread reads through its own connection,
and WAL lets readers query while a write runs.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA_VERSION = 1
PAGE_BYTES = 16384
BUILD_CACHE_KIB = 64 * 1024  # the writer's page cache while it fills an empty index
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
    size INTEGER, mtime INTEGER, hash TEXT, lang TEXT, dir TEXT);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE TABLE IF NOT EXISTS symbols(id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT,
    path TEXT NOT NULL, line INTEGER, end_line INTEGER, parent TEXT, signature TEXT, norm TEXT);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_nocase ON symbols(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS symbols_norm ON symbols(norm);
CREATE INDEX IF NOT EXISTS symbols_path ON symbols(path);
CREATE TABLE IF NOT EXISTS imports(id INTEGER PRIMARY KEY, path TEXT NOT NULL, module TEXT,
    line INTEGER);
CREATE INDEX IF NOT EXISTS imports_path ON imports(path);
CREATE TABLE IF NOT EXISTS import_targets(import_id INTEGER, path TEXT, target TEXT);
CREATE INDEX IF NOT EXISTS import_targets_target ON import_targets(target);
CREATE INDEX IF NOT EXISTS import_targets_path ON import_targets(path);
CREATE VIRTUAL TABLE IF NOT EXISTS contents USING fts5(body);
"""


_SECONDARY = re.findall(r"CREATE INDEX IF NOT EXISTS (\w+) ON [^;]+;", _SCHEMA)


def drop_secondary_indexes(conn: sqlite3.Connection) -> None:
    """Before filling an empty index: one sort per index afterwards beats keeping
    each one up to date row by row."""
    for name in _SECONDARY:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def create_secondary_indexes(conn: sqlite3.Connection) -> None:
    for statement in re.findall(r"CREATE INDEX IF NOT EXISTS [^;]+;", _SCHEMA):
        conn.execute(statement)


class CodeIndexError(Exception):
    """The code index could not do what was asked."""


class PathOutsideRootError(CodeIndexError, ValueError):
    """A path given to the index resolves outside the workspace root."""


def norm_name(name: str) -> str:
    """A symbol name as ``symbols.norm`` holds it: lower case, without ``_``."""
    return name.replace("_", "").lower()


class IndexDatabase:
    """The index file of the workspace at ``root``: connections, writes, paths."""

    def __init__(self, root: Path, db_path: Path) -> None:
        self.root = root.resolve()
        self.db_path = db_path
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        # The index holds the workspace's text (a .env included): private to the user.
        # SQLite gives its -wal and -shm files the database file's mode.
        db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(db_path.parent, 0o700)
        os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(db_path, 0o600)
        conn = self._conn()
        if conn.execute("PRAGMA user_version").fetchone()[0] not in (0, SCHEMA_VERSION):
            raise CodeIndexError(f"{db_path} holds an index of another schema version")
        conn.executescript(_SCHEMA)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.db_path, check_same_thread=False, timeout=30)
            conn.isolation_level = None  # we issue BEGIN ourselves
            # A new file only (an existing one keeps its own): fewer, bigger pages for
            # the files' text (one B-tree cell per file, fewer overflow chains).
            conn.execute(f"PRAGMA page_size={PAGE_BYTES}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a sidecar cache: rebuildable
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    def reader(self) -> sqlite3.Connection:
        """This thread's connection, for read-only queries over the index's tables."""
        return self._conn()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The writer's connection inside ``BEGIN IMMEDIATE``; one writer at a time."""
        with self._write_lock:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _rel(self, path: str | Path) -> str:
        """``path`` relative to the root; it must stay inside once symlinks are resolved."""
        p = Path(path)
        full = Path(os.path.normpath(p if p.is_absolute() else self.root / p))
        real = full.resolve()
        if not real.is_relative_to(self.root):
            raise PathOutsideRootError(f"{path} is outside {self.root}")
        rel = (full if full.is_relative_to(self.root) else real).relative_to(self.root)
        return "" if rel == Path() else rel.as_posix()
