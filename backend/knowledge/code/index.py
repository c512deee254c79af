"""The code index: a sidecar SQLite file of a workspace's files, symbols and imports.

Files are walked the way git sees them, by the workspace's
:class:`~backend.knowledge.watch.ignore.IgnorePolicy` (``.gitignore`` files and
the seed's ignore list, binaries left out; the file watcher uses the same one);
files over 1 MiB are skipped too. Symbols and imports come from
:mod:`~backend.knowledge.code.symbols`; file text goes into an FTS5 table for
full-text search. :class:`CodeIndex` is the writer; what it answers is
:class:`~backend.knowledge.code.index_queries.IndexQueries`, and its file and
connections are :class:`~backend.knowledge.code.index_db.IndexDatabase`.

One writer at a time (a lock; ``build``, ``update_files``, ``remove_files``);
readers use their own per-thread connections, and WAL lets them query while a
build runs: a build commits in batches, so queries see what is indexed so far.
Re-indexing is by content hash: a file whose bytes did not change costs a stat
(``build``) or a read and a hash (``update_files``).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from backend.knowledge.code.full_build.batch_writer import BatchWriter
from backend.knowledge.code.full_build.workers import default_workers, prepared_in_workers
from backend.knowledge.code.index_db import (
    BUILD_CACHE_KIB,
    create_secondary_indexes,
    drop_secondary_indexes,
    norm_name,
)
from backend.knowledge.code.index_queries import IndexQueries
from backend.knowledge.code.py_scan import ImportRow, SymbolRow, python_rows
from backend.knowledge.code.symbols import LANG_BY_EXT, extract
from backend.knowledge.watch.ignore import IgnorePolicy

MAX_FILE_BYTES = 1024 * 1024
PARALLEL_MIN_FILES = 256  # fewer files to read are parsed in this thread
PARALLEL_MIN_BYTES = 8 * 1024 * 1024  # and fewer bytes: a worker costs ~0.1 s to start
BATCH_SECONDS = 0.2
_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class BuildStats:
    files: int
    indexed: int
    removed: int
    seconds: float
    reindexed: tuple[str, ...] = ()  # the files (re)parsed or dropped as binary, in walk order


def _binary(head: bytes) -> bool:
    """A NUL in the first bytes: not text, whatever the file's name says."""
    return b"\x00" in head


@dataclass(frozen=True, slots=True)
class Prepared:
    """One file read, hashed and (unless its hash is ``prev_hash``) parsed into rows."""

    size: int
    mtime: int
    digest: str
    lang: str | None = None
    text: str | None = None  # None: same content as indexed, nothing to write
    symbols: tuple[SymbolRow, ...] = ()
    imports: tuple[ImportRow, ...] = ()


def prepare(root: str, rel: str, prev_hash: str | None) -> Prepared | None:
    """Read ``rel`` under ``root`` and parse it; None: gone, too big, or not text.

    A plain function of plain values, so a worker process can run it.
    """
    full = os.path.join(root, rel)
    try:
        st = os.stat(full)
        if st.st_size > MAX_FILE_BYTES:
            return None
        with open(full, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if _binary(raw[:_SNIFF_BYTES]):
        return None
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    if digest == prev_hash:
        return Prepared(st.st_size, st.st_mtime_ns, digest)
    text = raw.decode("utf-8", errors="replace")
    lang = LANG_BY_EXT.get(posixpath.splitext(rel)[1].lower())
    rows = python_rows(rel, text) if lang == "python" else None
    if rows is None:  # another language, or Python the AST must decide
        found = extract(lang, rel, text)
        rows = (
            [
                (s.name, s.kind, rel, s.line, s.end_line, s.parent, s.signature, norm_name(s.name))
                for s in found.symbols
            ],
            [(i.module, i.line, i.targets) for i in found.imports],
        )
    return Prepared(st.st_size, st.st_mtime_ns, digest, lang, text, tuple(rows[0]), tuple(rows[1]))


_SERVE = (
    "from backend.knowledge.code.index import prepare; "
    "from backend.knowledge.code.full_build.workers import serve; serve(prepare)"
)
FLUSH_CHARS = 256 * 1024  # text per batch the helper writes while this thread parses


Todo = tuple[tuple[str, tuple[object, ...] | None, int], Prepared | None]
OnCommit = Callable[[int], None] | None


class CodeIndex(IndexQueries):
    """Files, symbols, imports and full text of the workspace at ``root``."""

    def __init__(
        self,
        root: Path,
        db_path: Path,
        policy: IgnorePolicy | None = None,
        protected: Iterable[Path] = (),
        workers: int | None = None,
    ) -> None:
        resolved = root.resolve()
        self.workers = default_workers() if workers is None else workers
        self.policy = policy if policy is not None else IgnorePolicy(resolved, protected=protected)
        super().__init__(resolved, db_path)

    def _walk(self, under: str = "") -> Iterator[tuple[str, os.stat_result]]:
        for rel, st in self.policy.view().walk(under):
            if st.st_size <= MAX_FILE_BYTES:
                yield rel, st

    # -- writing --------------------------------------------------------------------

    def build(self, progress: Callable[[int, int], None] | None = None) -> BuildStats:
        """Index the whole workspace; unchanged files (same size and mtime) are skipped.

        Blocking: run it in a thread. Commits every ``BATCH_SECONDS`` so concurrent
        queries see the files indexed so far. Many files to read go to worker
        processes (:func:`prepared_in_workers`). An empty index is filled by a helper
        thread in big statements while this thread parses the next files
        (:class:`BatchWriter`), and gets its secondary indexes after the rows.
        """
        started = time.perf_counter()
        try:
            return self._build(started, progress)
        finally:  # a fresh build's settings end with it, however it ends
            conn = self._conn()
            if conn.execute("PRAGMA synchronous").fetchone()[0] == 0:
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA cache_size=-2000")  # SQLite's default

    def _build(self, started: float, progress: Callable[[int, int], None] | None) -> BuildStats:
        with self._transaction() as conn:
            walked = list(self._walk())
            known = {
                row[1]: row for row in conn.execute("SELECT id, path, size, mtime, hash FROM files")
            }
            empty = not known
            todo: list[tuple[str, tuple[object, ...] | None, int]] = []
            todo_bytes = 0
            for done, (rel, st) in enumerate(walked, 1):
                prev = known.pop(rel, None)
                if not prev or (prev[2], prev[3]) != (st.st_size, st.st_mtime_ns):
                    todo.append((rel, prev, done))
                    todo_bytes += st.st_size
            fresh = not known and (empty or len(todo) >= PARALLEL_MIN_FILES)
            if fresh:  # nothing to lose but this build: no syncs at WAL checkpoints either
                conn.execute("COMMIT")
                conn.execute("PRAGMA synchronous=OFF")
                # The text index and the sorts for the secondary indexes spill out of
                # SQLite's default 2 MiB page cache: a bigger one saves ~10% of the writes.
                conn.execute(f"PRAGMA cache_size=-{BUILD_CACHE_KIB}")
                conn.execute("BEGIN IMMEDIATE")
                drop_secondary_indexes(conn)
            else:  # a fresh build that failed after a commit left them dropped
                create_secondary_indexes(conn)
            batch = [(rel, str(prev[4]) if prev else None) for rel, prev, _ in todo]
            prepared = zip(todo, self._prepared(batch, todo_bytes), strict=True)
            on_commit = (lambda done: progress(done, len(walked))) if progress else None
            if empty:
                reindexed = self._fill(conn, prepared, on_commit)
            else:
                reindexed = self._write_each(conn, prepared, on_commit)
            for rel in known:
                self._delete(conn, rel)
            if fresh:  # the sorts for the indexes may use a second thread
                conn.execute("PRAGMA threads=2")
                create_secondary_indexes(conn)
                conn.execute("PRAGMA threads=0")
        if progress:
            progress(len(walked), len(walked))
        seconds = time.perf_counter() - started
        return BuildStats(len(walked), len(reindexed), len(known), seconds, tuple(reindexed))

    def _write_each(
        self, conn: sqlite3.Connection, prepared: Iterator[Todo], on_commit: OnCommit
    ) -> list[str]:
        """Each file's rows in turn (:meth:`_write`), committing every ``BATCH_SECONDS``."""
        reindexed: list[str] = []
        last_commit = time.perf_counter()
        for (rel, prev, done), ready in prepared:
            if self._write(conn, rel, prev, ready):
                reindexed.append(rel)
            if time.perf_counter() - last_commit > BATCH_SECONDS:
                conn.execute("COMMIT")  # let readers see the files indexed so far
                if on_commit:
                    on_commit(done)
                conn.execute("BEGIN IMMEDIATE")
                last_commit = time.perf_counter()
        return reindexed

    def _fill(
        self, conn: sqlite3.Connection, prepared: Iterator[Todo], on_commit: OnCommit
    ) -> list[str]:
        """An empty index's rows, written by a :class:`BatchWriter` on a helper thread
        while this one parses (or unpickles) the next files."""
        reindexed: list[str] = []
        done = 0
        last_flush = time.perf_counter()
        with BatchWriter(conn, BATCH_SECONDS, on_commit) as writer:
            for (rel, _, done), ready in prepared:
                if ready is None or ready.text is None:
                    continue  # not text (nothing of it indexed yet)
                writer.add(rel, ready, ready.text)
                reindexed.append(rel)
                # By the text, and by the clock too: many tiny files still commit.
                now = time.perf_counter()
                if writer.batch_chars >= FLUSH_CHARS or now - last_flush > BATCH_SECONDS:
                    writer.flush(done)
                    last_flush = now
            writer.flush(done)
        return reindexed

    def _prepared(
        self, batch: list[tuple[str, str | None]], nbytes: int
    ) -> Iterator[Prepared | None]:
        root = str(self.root)
        small = len(batch) < PARALLEL_MIN_FILES or nbytes < PARALLEL_MIN_BYTES
        if small or self.workers < 1:
            return (prepare(root, rel, prev_hash) for rel, prev_hash in batch)
        return prepared_in_workers(root, batch, self.workers, prepare, _SERVE)

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
        prev_hash = str(prev[4]) if prev is not None else None
        return self._write(conn, rel, prev, prepare(str(self.root), rel, prev_hash))

    def _write(
        self,
        conn: sqlite3.Connection,
        rel: str,
        prev: tuple[object, ...] | None,
        ready: Prepared | None,
    ) -> int:
        """Store what :func:`prepare` made of ``rel``; 1 if its rows changed."""
        if ready is None:
            return self._delete(conn, rel)
        if ready.text is None or (prev is not None and prev[4] == ready.digest):
            conn.execute(
                "UPDATE files SET size = ?, mtime = ? WHERE path = ?",
                (ready.size, ready.mtime, rel),
            )
            return 0
        values = (ready.size, ready.mtime, ready.digest, ready.lang, posixpath.dirname(rel), rel)
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
        conn.execute("INSERT INTO contents(rowid, body) VALUES (?, ?)", (file_id, ready.text))
        conn.executemany(
            "INSERT INTO symbols(name, kind, path, line, end_line, parent, signature, norm) "
            "VALUES (?,?,?,?,?,?,?,?)",
            ready.symbols,
        )
        for module, line, targets in ready.imports:
            cur = conn.execute(
                "INSERT INTO imports(path, module, line) VALUES (?,?,?)", (rel, module, line)
            )
            conn.executemany(
                "INSERT INTO import_targets(import_id, path, target) VALUES (?,?,?)",
                [(cur.lastrowid, rel, t) for t in targets],
            )
        return 1
