"""The archive's single writer: one thread, one connection, a queue of jobs.

Jobs queued while a transaction is being written are committed together in the
next ``BEGIN IMMEDIATE`` transaction (group commit), each inside its own
savepoint so a failing job rolls back alone and the others still commit. A
job's future resolves only after its transaction has committed.

A write the storage refuses (the disk is full, the database or its file system is
read-only, the disk failed) fails its job with :class:`ArchiveWriteError`, which names
the file and what to do, instead of the driver's bare ``OperationalError``; the writer
serves on, so the next write succeeds once the cause is gone.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import sqlite3
import threading
import zlib
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine

from backend.errors import ArchiveClosedError, ArchiveWriteError

log = logging.getLogger(__name__)

WriteFn = Callable[[Connection], Any]
MAX_GROUP = 512


@dataclass
class _Job:
    fn: WriteFn
    future: Future[Any] = field(default_factory=Future)


_STOP = object()

# SQLite's primary result codes (the low byte of an extended code) and errno values
# that mean the storage, not the statement, refused the write.
_SQLITE_REASONS = {
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_PERM: "read_only",
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_IOERR: "io",
    sqlite3.SQLITE_CANTOPEN: "cannot_open",
}
_ERRNO_REASONS = {
    errno.EROFS: "read_only",
    errno.EACCES: "read_only",
    errno.EPERM: "read_only",
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EIO: "io",
}


# PostgreSQL's SQLSTATE classes and codes that mean the server, not the statement,
# refused the write (the connection went, the disk is full, the server is read-only).
_PG_REASONS = {"08": "unavailable", "57P": "unavailable", "53100": "full", "25006": "read_only"}


def _pg_reason(exc: BaseException, cause: BaseException) -> str | None:
    if getattr(exc, "connection_invalidated", False):
        return "unavailable"
    if not type(cause).__module__.startswith("psycopg"):
        return None
    state = str(getattr(cause, "sqlstate", None) or "")
    for prefix in (state, state[:3], state[:2]):
        if prefix in _PG_REASONS:
            return _PG_REASONS[prefix]
    # psycopg's own OperationalError without a code: the connection failed or closed
    return "unavailable" if type(cause).__name__ == "OperationalError" and not state else None


def storage_failure(exc: BaseException, path: Any) -> ArchiveWriteError | None:
    """``exc`` as the typed error for ``path`` if the storage refused a write, else None."""
    if isinstance(exc, ArchiveWriteError):
        return exc
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    reason = _pg_reason(exc, cause)
    if reason is not None:
        return ArchiveWriteError(path, reason)
    if isinstance(cause, sqlite3.Error):
        code = getattr(cause, "sqlite_errorcode", None)
        reason = _SQLITE_REASONS.get(code & 0xFF) if isinstance(code, int) else None
    elif isinstance(cause, OSError) and cause.errno is not None:
        reason = _ERRNO_REASONS.get(cause.errno)
    if reason == "cannot_open" and isinstance(path, Path) and _read_only_folder(path.parent):
        reason = "read_only"  # SQLite cannot create its -wal or -shm file there
    return None if reason is None else ArchiveWriteError(path, reason)


def _read_only_folder(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
    except OSError:
        return False


class ArchiveWriter:
    def __init__(
        self, engine: Engine, name: str = "sylk-archive-writer", *, path: Any = None
    ) -> None:
        self._engine = engine
        self.path = path or Path(str(engine.url.database))
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: WriteFn) -> Future[Any]:
        with self._lock:
            if self._closed:
                raise ArchiveClosedError("the archive is closed")
            job = _Job(fn)
            self._queue.put(job)
        return job.future

    def close(self, timeout: float = 30.0) -> None:
        """Finish every queued job, then stop the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            conn = self._engine.connect()
        except Exception as exc:  # the file went away or became unwritable since it opened
            log.error("the archive writer cannot connect: %s", exc)
            failure = self._typed(exc)
            while (job := self._queue.get()) is not _STOP:
                job.future.set_exception(failure)
            return
        with conn:
            stopping = False
            while not stopping:
                first = self._queue.get()
                if first is _STOP:
                    break
                jobs: list[_Job] = [first]
                while len(jobs) < MAX_GROUP:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        stopping = True
                        break
                    jobs.append(nxt)
                self._commit_group(conn, jobs)

    def _typed(self, exc: BaseException) -> BaseException:
        return storage_failure(exc, self.path) or exc

    def _commit_group(self, conn: Connection, jobs: list[_Job]) -> None:
        started: set[int] = set()
        try:
            outcomes = self._run_group(conn, jobs, started)
        except Exception as exc:
            # A connection the server dropped before COMMIT was sent (PostgreSQL):
            # nothing of the group was stored, so it runs once more on a new connection.
            # Lost during COMMIT, its fate is unknown: the group fails, typed.
            if not _lost_before_commit(exc, self._typed(exc)):
                self._fail_group(jobs, exc)
                return
            log.warning("the archive connection was lost; retrying the write once")
            try:
                conn.rollback()  # lets the Connection take a new one from the pool
                outcomes = self._run_group(conn, jobs, started)
            except Exception as again:
                self._fail_group(jobs, again)
                return
        for job, ok, value in outcomes:
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(self._typed(value))

    def _fail_group(self, jobs: list[_Job], exc: BaseException) -> None:
        """The commit failed: nothing was written."""
        typed = self._typed(exc)
        if typed is exc:
            log.error("archive commit failed", exc_info=exc)
        else:
            log.error("archive commit failed: %s", typed)
        # Every job of the group, including those never started because
        # BEGIN IMMEDIATE itself failed (e.g. the busy timeout ran out).
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(typed)

    def _run_group(
        self, conn: Connection, jobs: list[_Job], started: set[int]
    ) -> list[tuple[_Job, bool, Any]]:
        outcomes: list[tuple[_Job, bool, Any]] = []
        committing = _Committing()
        try:
            with conn.begin():
                # Savepoints straight on the driver: begin_nested() compiles and
                # runs two SQLAlchemy statements per job.
                raw = conn.connection.driver_connection
                assert raw is not None
                for job in jobs:
                    if id(job) not in started:
                        if not job.future.set_running_or_notify_cancel():
                            continue
                        started.add(id(job))
                    raw.execute("SAVEPOINT sylk_job")
                    try:
                        value = job.fn(conn)
                    except Exception as exc:  # the job's own failure, reported to it
                        try:
                            raw.execute("ROLLBACK TO sylk_job")
                            raw.execute("RELEASE sylk_job")
                        except Exception:  # SQLite rolled the whole transaction back
                            raise exc from None  # (a full disk, an I/O error): the group fails
                        outcomes.append((job, False, exc))
                    else:
                        raw.execute("RELEASE sylk_job")
                        outcomes.append((job, True, value))
                committing.now = True
        except Exception as exc:
            setattr(exc, "_sylk_during_commit", committing.now)  # noqa: B010
            raise
        return outcomes


@dataclass
class _Committing:
    now: bool = False


def _lost_before_commit(exc: BaseException, typed: BaseException) -> bool:
    return (
        isinstance(typed, ArchiveWriteError)
        and typed.reason == "unavailable"
        and not getattr(exc, "_sylk_during_commit", True)
    )


class WriterLanes:
    """Writers that commit side by side, each on its own connection (PostgreSQL's pool;
    SQLite has one lane, since it has one writer). Jobs with the same key always go to
    the same lane, so one session's writes commit in the order they were submitted;
    jobs without a key go to the first lane."""

    def __init__(self, engine: Engine, lanes: int, *, path: Any) -> None:
        names = ["sylk-archive-writer"] + [f"sylk-archive-writer-{n}" for n in range(1, lanes)]
        self._lanes = [ArchiveWriter(engine, name, path=path) for name in names]

    def submit(self, fn: WriteFn, key: str | None = None) -> Future[Any]:
        lane = 0 if key is None else zlib.crc32(key.encode()) % len(self._lanes)
        return self._lanes[lane].submit(fn)

    def close(self, timeout: float = 30.0) -> None:
        for lane in self._lanes:
            lane.close(timeout)
