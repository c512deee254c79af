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

import contextlib
import fcntl
import hashlib
import os
import pickle
import posixpath
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
_CHUNK = 16
_PIPE_BYTES = 1024 * 1024  # Linux's default pipe-max-size
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


_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
_SERVE = "from backend.knowledge.code.index import serve_prepare; serve_prepare()"


def _prepare_chunk(root: str, chunk: list[tuple[str, str | None]]) -> list[Prepared | None]:
    return [prepare(root, rel, prev_hash) for rel, prev_hash in chunk]


def default_workers() -> int:
    """Worker processes for a big build: the cores this process may use, at most 2;
    none on one core (this thread would only wait for them)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return min(2, cores) if cores > 1 else 0


def prepared_in_workers(
    root: str, batch: list[tuple[str, str | None]], workers: int
) -> Iterator[Prepared | None]:
    """:func:`prepare` of each of ``batch``, in order, by ``workers`` child processes.

    Plain ``python -I`` children running :func:`serve_prepare` (not a multiprocessing
    pool, which re-imports the parent's main module in each child). Each child reads
    all its chunks (round-robin) before it answers, so no pipe can fill both ways; a
    child that dies leaves the rest to this thread.
    """
    chunks = [batch[k : k + _CHUNK] for k in range(0, len(batch), _CHUNK)]
    code = f"import sys; sys.path.insert(0, {_PACKAGE_ROOT!r}); {_SERVE}"
    procs: list[subprocess.Popen[bytes]] = []
    done = 0
    try:
        for _ in range(min(workers, len(chunks))):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-I", "-c", code],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env={"PATH": os.environ.get("PATH", "")},  # no key of Sylk's
                )
            )
            assert procs[-1].stdout is not None
            with contextlib.suppress(OSError, AttributeError):  # room to run ahead of us
                fcntl.fcntl(procs[-1].stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        for k, proc in enumerate(procs):
            assert proc.stdin is not None
            with proc.stdin:
                pickle.dump((root, chunks[k :: len(procs)]), proc.stdin)
        for k, chunk in enumerate(chunks):
            out = procs[k % len(procs)].stdout
            assert out is not None
            prepared: list[Prepared | None] = pickle.load(out)
            if len(prepared) != len(chunk):
                raise EOFError("a worker answered another chunk")
            done += len(chunk)
            yield from prepared
    except (OSError, EOFError, pickle.UnpicklingError):
        for rel, prev_hash in batch[done:]:
            yield prepare(root, rel, prev_hash)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def serve_prepare() -> None:
    """A worker of :func:`prepared_in_workers`: its chunks in, their files prepared out."""
    root, chunks = pickle.load(sys.stdin.buffer)
    for chunk in chunks:
        pickle.dump(_prepare_chunk(root, chunk), sys.stdout.buffer)
        sys.stdout.buffer.flush()


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
        processes (:func:`prepared_in_workers`) while this thread writes; an empty
        index gets its secondary indexes after the rows, not row by row.
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
            batch = [(rel, str(prev[4]) if prev else None) for rel, prev, _ in todo]
            reindexed: list[str] = []
            last_commit = time.perf_counter()
            prepared = self._prepared(batch, todo_bytes)
            for (rel, prev, done), ready in zip(todo, prepared, strict=True):
                if self._write(conn, rel, prev, ready):
                    reindexed.append(rel)
                if time.perf_counter() - last_commit > BATCH_SECONDS:
                    conn.execute("COMMIT")  # let readers see the files indexed so far
                    if progress:
                        progress(done, len(walked))
                    conn.execute("BEGIN IMMEDIATE")
                    last_commit = time.perf_counter()
            for rel in known:
                self._delete(conn, rel)
            if fresh:
                create_secondary_indexes(conn)
        if progress:
            progress(len(walked), len(walked))
        seconds = time.perf_counter() - started
        return BuildStats(len(walked), len(reindexed), len(known), seconds, tuple(reindexed))

    def _prepared(
        self, batch: list[tuple[str, str | None]], nbytes: int
    ) -> Iterator[Prepared | None]:
        root = str(self.root)
        small = len(batch) < PARALLEL_MIN_FILES or nbytes < PARALLEL_MIN_BYTES
        if small or self.workers < 1:
            return (prepare(root, rel, prev_hash) for rel, prev_hash in batch)
        return prepared_in_workers(root, batch, self.workers)

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
