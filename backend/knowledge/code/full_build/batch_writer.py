"""An empty code index filled in a few big statements per batch, on a helper thread.

Python's sqlite3 lets go of the GIL while a statement runs, so SQLite's share of a
build (tokenising the text for full-text search above all) can run while the
building thread parses the next files. Only in big statements, though: a thread
that steps one row at a time must take the GIL back after every row, and waits up
to a switch interval (5 ms) for it each time while the other thread parses.

So the building thread collects a batch's rows in plain lists (:meth:`BatchWriter.add`,
no SQLite), and :meth:`BatchWriter.flush` hands them to one helper thread, which
writes each table in multi-row ``INSERT ... VALUES`` statements and commits when
``commit_every`` seconds have passed since its last commit (so readers see the files
indexed so far). The connection is used by one thread at a time: the helper owns it
from a flush until the next flush (or the writer's end) has waited for it, and no
COMMIT can run while a statement does. Row ids are what one-row-at-a-time inserts
into the same tables would give: files and imports get the next free ids, in order.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

SymbolRow = Sequence[object]  # name, kind, path, line, end_line, parent, signature, norm
ImportRow = tuple[str, int, Sequence[str]]

_FILES = "INSERT INTO files(id, path, size, mtime, hash, lang, dir) VALUES "
_CONTENTS = "INSERT INTO contents(rowid, body) VALUES "
_SYMBOLS = "INSERT INTO symbols(name, kind, path, line, end_line, parent, signature, norm) VALUES "
_IMPORTS = "INSERT INTO imports(id, path, module, line) VALUES "
_TARGETS = "INSERT INTO import_targets(import_id, path, target) VALUES "


class NewFile(Protocol):
    """What :meth:`BatchWriter.add` takes of a file read and parsed (its text aside)."""

    @property
    def size(self) -> int: ...
    @property
    def mtime(self) -> int: ...
    @property
    def digest(self) -> str: ...
    @property
    def lang(self) -> str | None: ...
    @property
    def symbols(self) -> Sequence[SymbolRow]: ...
    @property
    def imports(self) -> Sequence[ImportRow]: ...


@dataclass(slots=True)
class _Batch:
    """One batch's rows, each table's values flattened in one list."""

    files: list[object] = field(default_factory=list)
    contents: list[object] = field(default_factory=list)
    symbols: list[object] = field(default_factory=list)
    imports: list[object] = field(default_factory=list)
    targets: list[object] = field(default_factory=list)
    text_chars: int = 0


class BatchWriter:
    """Writes the rows of new files into an empty index's tables on a helper thread.

    Use it as a context manager on the writer's connection inside its transaction;
    on a clean exit the last batch is written, and on any exit the helper is idle
    before the connection is the caller's again.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        commit_every: float,
        on_commit: Callable[[int], None] | None = None,
    ) -> None:
        self._conn = conn
        self._commit_every = commit_every
        self._on_commit = on_commit
        self._next_file = _next_id(conn, "files")
        self._next_import = _next_id(conn, "imports")
        self._max_params = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        self._batch = _Batch()
        self._helper = ThreadPoolExecutor(1, thread_name_prefix="code-index-writer")
        self._pending: Future[bool] | None = None
        self._pending_done = 0
        self._last_commit = time.perf_counter()

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc_type is None:
                self.flush(self._pending_done)
                self.wait()
        finally:
            self._helper.shutdown(wait=True)  # the connection is the caller's again

    @property
    def batch_chars(self) -> int:
        """The text collected since the last flush, in characters."""
        return self._batch.text_chars

    def add(self, rel: str, file: NewFile, text: str) -> None:
        """A new file's rows, for the next flush."""
        batch = self._batch
        file_id = self._next_file
        self._next_file += 1
        dirname = posixpath.dirname(rel)
        batch.files += (file_id, rel, file.size, file.mtime, file.digest, file.lang, dirname)
        batch.contents += (file_id, text)
        batch.text_chars += len(text)
        batch.symbols.extend(itertools.chain.from_iterable(file.symbols))
        for module, line, targets in file.imports:
            import_id = self._next_import
            self._next_import += 1
            batch.imports += (import_id, rel, module, line)
            for target in targets:
                batch.targets += (import_id, rel, target)

    def flush(self, done: int) -> None:
        """Hand the rows added so far to the helper, once it has written the last
        batch; ``done`` is the walk position :meth:`add` reached, for ``on_commit``."""
        self.wait()
        batch, self._batch = self._batch, _Batch()
        if batch.files:
            self._pending = self._helper.submit(self._write, batch)
            self._pending_done = done

    def wait(self) -> None:
        """Until the helper has written what it was given (its error, if any, here)."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.result() and self._on_commit is not None:
            self._on_commit(self._pending_done)

    def _write(self, batch: _Batch) -> bool:
        """On the helper thread: the batch's rows, then a commit if one is due."""
        conn = self._conn
        self._insert(_FILES, 7, batch.files)
        self._insert(_CONTENTS, 2, batch.contents)
        self._insert(_SYMBOLS, 8, batch.symbols)
        self._insert(_IMPORTS, 4, batch.imports)
        self._insert(_TARGETS, 3, batch.targets)
        if time.perf_counter() - self._last_commit <= self._commit_every:
            return False
        conn.execute("COMMIT")  # let readers see the files indexed so far
        conn.execute("BEGIN IMMEDIATE")
        self._last_commit = time.perf_counter()
        return True

    def _insert(self, head: str, width: int, values: list[object]) -> None:
        """``values`` (rows of ``width`` flattened) in as few statements as SQLite's
        limit on parameters allows; a full-size statement is compiled once."""
        per = max(1, self._max_params // width)
        rows = len(values) // width
        for start in range(0, rows, per):
            count = min(per, rows - start)
            sql = _values_sql(head, width, count)
            self._conn.execute(sql, values[start * width : (start + count) * width])


@functools.lru_cache(maxsize=32)
def _values_sql(head: str, width: int, rows: int) -> str:
    return head + ",".join(["(" + ",".join("?" * width) + ")"] * rows)


def _next_id(conn: sqlite3.Connection, table: str) -> int:
    """The id SQLite would give the next row: one more than the largest."""
    return int(conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0])
