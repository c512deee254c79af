"""The code index: a sidecar SQLite file of a workspace's files, symbols and imports.

Files are walked the way git sees them, by the workspace's
:class:`~backend.knowledge.watch.ignore.IgnorePolicy` (``.gitignore`` files and
the seed's ignore list, binaries left out; the file watcher uses the same one);
files over 1 MiB are skipped too. Symbols and imports come from
:mod:`code_symbols`; file text goes into an FTS5 table for full-text search.

One writer at a time (a lock; ``build``, ``update_files``, ``remove_files``);
readers use their own per-thread connections, and WAL lets them query while a
build runs: a build commits in batches, so queries see what is indexed so far.
Re-indexing is by content hash: a file whose bytes did not change costs a stat
(``build``) or a read and a hash (``update_files``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import posixpath
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backend.knowledge.code.symbols import LANG_BY_EXT, extract
from backend.knowledge.watch.ignore import IgnorePolicy

MAX_FILE_BYTES = 1024 * 1024
SCHEMA_VERSION = 1
BATCH_SECONDS = 0.2
_DEF_RANK = (
    "CASE WHEN kind IN ('class','struct','interface','trait','enum','type') THEN 0 "
    "WHEN kind IN ('function','method') THEN 1 ELSE 2 END"
)
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


class CodeIndexError(Exception):
    """The code index could not do what was asked."""


class PathOutsideRootError(CodeIndexError, ValueError):
    """A path given to the index resolves outside the workspace root."""


@dataclass(frozen=True, slots=True)
class SymbolHit:
    name: str
    kind: str
    path: str
    line: int
    end_line: int | None
    parent: str | None
    signature: str


@dataclass(frozen=True, slots=True)
class TextHit:
    path: str
    line: int
    snippet: str


@dataclass(frozen=True, slots=True)
class FileOutline:
    path: str
    lang: str | None
    symbols: list[SymbolHit]
    imports: list[str]


@dataclass(frozen=True, slots=True)
class DependencyEdge:
    path: str  # the importing file
    module: str
    line: int
    target: str | None  # the workspace file (or Go package dir + "/") imported, if any


@dataclass(slots=True)
class Dependencies:
    imports: list[DependencyEdge] = field(default_factory=list)
    imported_by: list[DependencyEdge] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class BuildStats:
    files: int
    indexed: int
    removed: int
    seconds: float


# -- the index --------------------------------------------------------------------------


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


_SNIFF_BYTES = 8192


def _binary(head: bytes) -> bool:
    """A NUL in the first bytes: not text, whatever the file's name says."""
    return b"\x00" in head


def search_words(text: str) -> set[str]:
    """The lower-case words full-text search matches ``text`` by (FTS5's unicode61
    tokens: runs of letters and digits, so ``read_text`` is two words)."""
    return set(re.findall(r"[^\W_]+", text.lower()))


class CodeIndex:
    """Files, symbols, imports and full text of the workspace at ``root``."""

    def __init__(self, root: Path, db_path: Path, policy: IgnorePolicy | None = None) -> None:
        self.root = root.resolve()
        self.policy = policy if policy is not None else IgnorePolicy(self.root)
        self.db_path = db_path
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        db_path.parent.mkdir(parents=True, exist_ok=True)
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

    # -- paths ----------------------------------------------------------------------

    def _rel(self, path: str | Path) -> str:
        """``path`` relative to the root; it must stay inside once symlinks are resolved."""
        p = Path(path)
        full = Path(os.path.normpath(p if p.is_absolute() else self.root / p))
        real = full.resolve()
        if not real.is_relative_to(self.root):
            raise PathOutsideRootError(f"{path} is outside {self.root}")
        rel = (full if full.is_relative_to(self.root) else real).relative_to(self.root)
        return "" if rel == Path() else rel.as_posix()

    def _walk(self, under: str = "") -> Iterator[tuple[str, os.stat_result]]:
        for rel, st in self.policy.view().walk(under):
            if st.st_size <= MAX_FILE_BYTES:
                yield rel, st

    def is_ignored(self, path: str | Path) -> bool:
        """Whether the walk would skip ``path`` (its directories, .gitignore rules, type)."""
        return self.policy.ignores(self._rel(path))

    # -- writing --------------------------------------------------------------------

    def build(self, progress: Callable[[int, int], None] | None = None) -> BuildStats:
        """Index the whole workspace; unchanged files (same size and mtime) are skipped.

        Blocking: run it in a thread (see :meth:`build_async`). Commits every
        ``BATCH_SECONDS`` so concurrent queries see the files indexed so far.
        """
        started = time.perf_counter()
        with self._transaction() as conn:
            walked = list(self._walk())
            known = {
                row[1]: row for row in conn.execute("SELECT id, path, size, mtime, hash FROM files")
            }
            indexed = 0
            last_commit = time.perf_counter()
            for done, (rel, st) in enumerate(walked, 1):
                prev = known.pop(rel, None)
                if prev and (prev[2], prev[3]) == (st.st_size, st.st_mtime_ns):
                    continue
                indexed += self._index_file(conn, rel, prev)
                if time.perf_counter() - last_commit > BATCH_SECONDS:
                    conn.execute("COMMIT")  # let readers see the files indexed so far
                    if progress:
                        progress(done, len(walked))
                    conn.execute("BEGIN IMMEDIATE")
                    last_commit = time.perf_counter()
            for rel in known:
                self._delete(conn, rel)
        if progress:
            progress(len(walked), len(walked))
        return BuildStats(len(walked), indexed, len(known), time.perf_counter() - started)

    async def build_async(self, progress: Callable[[int, int], None] | None = None) -> BuildStats:
        return await asyncio.to_thread(self.build, progress)

    def update_files(self, paths: Iterable[str | Path]) -> int:
        """Re-index ``paths`` whose content hash changed; drop gone or ignored ones.

        Returns how many files were (re)indexed or dropped.
        """
        rels = [self._rel(p) for p in paths]
        ignore = self.policy.view()  # read each .gitignore once for the whole batch
        changed = 0
        with self._transaction() as conn:
            for rel in rels:
                prev = conn.execute(
                    "SELECT id, path, size, mtime, hash FROM files WHERE path = ?", (rel,)
                ).fetchone()
                full = self.root / rel
                if not full.is_file() or full.is_symlink() or ignore.ignores(rel):
                    changed += self._delete(conn, rel)
                else:
                    changed += self._index_file(conn, rel, prev)
        return changed

    def drift(self, under: str = "") -> tuple[set[str], set[str]]:
        """Where the index and a fresh walk of ``under`` (relative; "" is the root)
        disagree: (indexed files the walk no longer finds, walked files not indexed).

        An edit to a ``.gitignore`` does this without touching the files it hides or
        shows; it costs a walk, one query, and a peek into each unindexed file (a binary
        one is walked but never indexed, so it is no news).
        """
        walked = {rel for rel, _ in self._walk(under)}
        conn = self._conn()
        if under:
            rows = conn.execute(
                "SELECT path FROM files WHERE path > ? AND path < ?", (under + "/", under + "0")
            )
        else:
            rows = conn.execute("SELECT path FROM files")
        indexed = {path for (path,) in rows}
        return indexed - walked, {rel for rel in walked - indexed if self._is_text(rel)}

    def _is_text(self, rel: str) -> bool:
        try:
            with (self.root / rel).open("rb") as f:
                return not _binary(f.read(_SNIFF_BYTES))
        except OSError:
            return False

    def remove_files(self, paths: Iterable[str | Path]) -> int:
        rels = [self._rel(p) for p in paths]
        with self._transaction() as conn:
            return sum(self._delete(conn, rel) for rel in rels)

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

    def _delete(self, conn: sqlite3.Connection, rel: str, keep_file: bool = False) -> int:
        row = conn.execute("SELECT id FROM files WHERE path = ?", (rel,)).fetchone()
        conn.execute("DELETE FROM symbols WHERE path = ?", (rel,))
        conn.execute("DELETE FROM import_targets WHERE path = ?", (rel,))
        conn.execute("DELETE FROM imports WHERE path = ?", (rel,))
        if row is None:
            return 0
        conn.execute("DELETE FROM contents WHERE rowid = ?", (row[0],))
        if not keep_file:
            conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
        return 1

    def _index_file(
        self, conn: sqlite3.Connection, rel: str, prev: tuple[object, ...] | None
    ) -> int:
        full = self.root / rel
        try:
            st = full.stat()
            raw = full.read_bytes() if st.st_size <= MAX_FILE_BYTES else None
        except OSError:
            raw = None
        if raw is None or _binary(raw[:_SNIFF_BYTES]):
            return self._delete(conn, rel)
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        if prev is not None and prev[4] == digest:
            conn.execute(
                "UPDATE files SET size = ?, mtime = ? WHERE path = ?",
                (st.st_size, st.st_mtime_ns, rel),
            )
            return 0
        text = raw.decode("utf-8", errors="replace")
        lang = LANG_BY_EXT.get(posixpath.splitext(rel)[1].lower())
        found = extract(lang, rel, text)
        values = (st.st_size, st.st_mtime_ns, digest, lang, posixpath.dirname(rel), rel)
        if prev is not None:
            self._delete(conn, rel, keep_file=True)
            conn.execute(
                "UPDATE files SET size=?, mtime=?, hash=?, lang=?, dir=? WHERE path=?", values
            )
            file_id = prev[0]
        else:
            cur = conn.execute(
                "INSERT INTO files(size, mtime, hash, lang, dir, path) VALUES (?,?,?,?,?,?)",
                values,
            )
            file_id = cur.lastrowid
        conn.execute("INSERT INTO contents(rowid, body) VALUES (?, ?)", (file_id, text))
        conn.executemany(
            "INSERT INTO symbols(name, kind, path, line, end_line, parent, signature, norm) "
            "VALUES (?,?,?,?,?,?,?,?)",
            [
                (s.name, s.kind, rel, s.line, s.end_line, s.parent, s.signature, _norm(s.name))
                for s in found.symbols
            ],
        )
        for imp in found.imports:
            cur = conn.execute(
                "INSERT INTO imports(path, module, line) VALUES (?,?,?)",
                (rel, imp.module, imp.line),
            )
            conn.executemany(
                "INSERT INTO import_targets(import_id, path, target) VALUES (?,?,?)",
                [(cur.lastrowid, rel, t) for t in imp.targets],
            )
        return 1

    # -- queries --------------------------------------------------------------------

    def locate(self, name: str, limit: int = 50) -> list[SymbolHit]:
        """Definitions named ``name``: exact, else case-insensitive, else ignoring ``_``."""
        tiers = (("name = ?", name), ("name = ? COLLATE NOCASE", name), ("norm = ?", _norm(name)))
        for where, arg in tiers:
            rows = self._conn().execute(
                "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
                f"WHERE {where} ORDER BY {_DEF_RANK}, parent IS NOT NULL, path, line LIMIT ?",
                (arg, limit),
            )
            hits = [SymbolHit(*row) for row in rows]
            if hits:
                return hits
        return []

    def find_symbols(
        self, fragment: str, kinds: Iterable[str] = (), limit: int = 50
    ) -> list[SymbolHit]:
        """Definitions whose name contains ``fragment`` (case-insensitive), of ``kinds``."""
        kinds = list(kinds)
        where = "instr(lower(name), ?) > 0"
        args: list[object] = [fragment.lower()]
        if kinds:
            where += f" AND kind IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        rows = self._conn().execute(
            "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
            f"WHERE {where} ORDER BY length(name), {_DEF_RANK}, path, line LIMIT ?",
            (*args, limit),
        )
        return [SymbolHit(*row) for row in rows]

    def names_in(self, paths: Iterable[str]) -> set[str]:
        """Normalised names of the symbols the index holds for ``paths`` (relative)."""
        sql = "SELECT DISTINCT norm FROM symbols WHERE path IN ({marks})"
        return {str(name) for (name,) in self._rows_for_paths(sql, paths)}

    def words_in(self, paths: Iterable[str]) -> set[str]:
        """:func:`search_words` of the indexed text of ``paths`` (relative)."""
        sql = (
            "SELECT c.body FROM contents c JOIN files f ON f.id = c.rowid WHERE f.path IN ({marks})"
        )
        words: set[str] = set()
        for (body,) in self._rows_for_paths(sql, paths):
            words |= search_words(str(body))
        return words

    def _rows_for_paths(self, sql: str, paths: Iterable[str]) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (a query with ``IN ({marks})``) for ``paths``, 500 at a time:
        SQLite caps the number of bound parameters."""
        rels = list(paths)
        conn = self._conn()
        for start in range(0, len(rels), 500):
            chunk = rels[start : start + 500]
            yield from conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)

    def reader(self) -> sqlite3.Connection:
        """This thread's connection, for read-only queries over the index's tables."""
        return self._conn()

    def file_count(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM files").fetchone()[0])

    def lines(self, path: str, start: int, end: int) -> list[str]:
        """Lines ``start``..``end`` (1-based, inclusive) of an indexed file, from the index."""
        row = (
            self._conn()
            .execute(
                "SELECT c.body FROM contents c JOIN files f ON f.id = c.rowid WHERE f.path = ?",
                (self._rel(path),),
            )
            .fetchone()
        )
        if row is None:
            return []
        return str(row[0]).splitlines()[max(start - 1, 0) : end]

    def search(self, text: str, limit: int = 20) -> list[TextHit]:
        """Files whose text holds every word of ``text`` (adjacent words of an identifier
        such as ``read_text`` as a phrase), best first, with the first match's line."""
        words = re.findall(r"\w+", text)
        if not words:
            return []
        query = " ".join('"' + w.replace('"', "") + '"' for w in words)
        rows = self._conn().execute(
            "SELECT f.path, snippet(contents, 0, '[', ']', '…', 12), "
            "highlight(contents, 0, char(1), char(2)) FROM contents "
            "JOIN files f ON f.id = contents.rowid WHERE contents MATCH ? ORDER BY rank LIMIT ?",
            (query, limit),
        )
        hits = []
        for path, snippet, marked in rows:
            first = marked.find("\x01")
            if first < 0:
                hits.append(TextHit(path, 1, " ".join(snippet.split())))
                continue
            line = marked.count("\n", 0, first) + 1
            start = marked.rfind("\n", 0, first) + 1
            end = marked.find("\n", first)
            text = marked[start : end if end >= 0 else len(marked)]
            hits.append(TextHit(path, line, text.replace("\x01", "[").replace("\x02", "]").strip()))
        return hits

    def structure(self, path: str | Path = ".", limit: int = 500) -> list[FileOutline]:
        """Outline (symbols, imported modules) of a file, or of each file under a directory."""
        rel = self._rel(path)
        conn = self._conn()
        if rel and conn.execute("SELECT 1 FROM files WHERE path = ?", (rel,)).fetchone():
            files = conn.execute("SELECT path, lang FROM files WHERE path = ?", (rel,)).fetchall()
        elif rel:
            files = conn.execute(
                "SELECT path, lang FROM files WHERE path > ? AND path < ? ORDER BY path LIMIT ?",
                (rel + "/", rel + "0", limit),
            ).fetchall()
        else:
            files = conn.execute(
                "SELECT path, lang FROM files ORDER BY path LIMIT ?", (limit,)
            ).fetchall()
        out = []
        for file_path, lang in files:
            symbols = [
                SymbolHit(*row)
                for row in conn.execute(
                    "SELECT name, kind, path, line, end_line, parent, signature FROM symbols "
                    "WHERE path = ? ORDER BY line",
                    (file_path,),
                )
            ]
            imports = [
                m
                for (m,) in conn.execute(
                    "SELECT module FROM imports WHERE path = ? ORDER BY line", (file_path,)
                )
            ]
            out.append(FileOutline(file_path, lang, symbols, imports))
        return out

    def dependencies(
        self, path: str | Path, direction: Literal["imports", "imported_by", "both"] = "imports"
    ) -> Dependencies:
        """What ``path`` imports (resolved to workspace files where possible) and who imports it."""
        rel = self._rel(path)
        conn = self._conn()
        deps = Dependencies()
        if direction in ("imports", "both"):
            for import_id, module, line in conn.execute(
                "SELECT id, module, line FROM imports WHERE path = ? ORDER BY line", (rel,)
            ).fetchall():
                targets = [
                    t
                    for (t,) in conn.execute(
                        "SELECT target FROM import_targets WHERE import_id = ? ORDER BY rowid",
                        (import_id,),
                    )
                    if self._target_exists(conn, t)
                ]
                if any(t.endswith("/") for t in targets):
                    targets = targets[:1]  # Go: the longest package-path suffix that exists
                for target in targets or [None]:
                    deps.imports.append(DependencyEdge(rel, module, line, target))
        if direction in ("imported_by", "both"):
            package = posixpath.dirname(rel) + "/"
            for src, module, line, target in conn.execute(
                "SELECT DISTINCT i.path, i.module, i.line, t.target FROM import_targets t "
                "JOIN imports i ON i.id = t.import_id WHERE t.target IN (?, ?) AND i.path != ? "
                "ORDER BY i.path, i.line",
                (rel, package, rel),
            ):
                deps.imported_by.append(DependencyEdge(src, module, line, target))
        return deps

    @staticmethod
    def _target_exists(conn: sqlite3.Connection, target: str) -> bool:
        if target.endswith("/"):
            sql, arg = "SELECT 1 FROM files WHERE dir = ? AND lang = 'go' LIMIT 1", target[:-1]
        else:
            sql, arg = "SELECT 1 FROM files WHERE path = ?", target
        return conn.execute(sql, (arg,)).fetchone() is not None
