"""The archive's single writer: one thread, one connection, a queue of jobs.

Jobs queued while a transaction is being written are committed together in the
next ``BEGIN IMMEDIATE`` transaction (group commit), each inside its own
savepoint so a failing job rolls back alone and the others still commit. A
job's future resolves only after its transaction has committed.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine

from backend.errors import ArchiveClosedError

log = logging.getLogger(__name__)

WriteFn = Callable[[Connection], Any]
MAX_GROUP = 512


@dataclass
class _Job:
    fn: WriteFn
    future: Future[Any] = field(default_factory=Future)


_STOP = object()


class ArchiveWriter:
    def __init__(self, engine: Engine, name: str = "sylk-archive-writer") -> None:
        self._engine = engine
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
        with self._engine.connect() as conn:
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

    @staticmethod
    def _commit_group(conn: Connection, jobs: list[_Job]) -> None:
        outcomes: list[tuple[_Job, bool, Any]] = []
        try:
            with conn.begin():
                # Savepoints straight on the driver: begin_nested() compiles and
                # runs two SQLAlchemy statements per job.
                raw = conn.connection.driver_connection
                assert raw is not None
                for job in jobs:
                    if not job.future.set_running_or_notify_cancel():
                        continue
                    raw.execute("SAVEPOINT sylk_job")
                    try:
                        value = job.fn(conn)
                    except Exception as exc:  # the job's own failure, reported to it
                        raw.execute("ROLLBACK TO sylk_job")
                        raw.execute("RELEASE sylk_job")
                        outcomes.append((job, False, exc))
                    else:
                        raw.execute("RELEASE sylk_job")
                        outcomes.append((job, True, value))
        except Exception as exc:  # the commit itself failed: nothing was written
            log.exception("archive commit failed")
            # Every job of the group, including those never started because
            # BEGIN IMMEDIATE itself failed (e.g. the busy timeout ran out).
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(exc)
            return
        for job, ok, value in outcomes:
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)
