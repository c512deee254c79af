"""Read/write locks on files, one per resolved path, shared by every session of an engine.

Readers share a file, a writer has it alone. The lock is fair: requests are granted in
the order they came, so a reader arriving while a writer waits queues behind it and a
stream of readers never starves a writer. A request cancelled while it waits leaves the
queue (waking whoever it held up); one cancelled just after it was granted releases
what it got. Locks of files nobody holds or waits for are dropped, so the table stays
as small as the set of files in use.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path


class RWLock:
    """A fair (first come, first served) asyncio reader/writer lock."""

    def __init__(self) -> None:
        self._readers = 0
        self._writer = False
        self._waiting: deque[tuple[bool, asyncio.Future[None]]] = deque()

    @property
    def idle(self) -> bool:
        return not self._readers and not self._writer and not self._waiting

    @property
    def readers(self) -> int:
        return self._readers

    @property
    def writing(self) -> bool:
        return self._writer

    def _can(self, write: bool) -> bool:
        return not self._writer and (self._readers == 0 if write else True)

    def _take(self, write: bool) -> None:
        if write:
            self._writer = True
        else:
            self._readers += 1

    async def acquire(self, write: bool) -> None:
        if not self._waiting and self._can(write):
            self._take(write)
            return
        entry = (write, asyncio.get_running_loop().create_future())
        self._waiting.append(entry)
        try:
            await entry[1]
        except asyncio.CancelledError:
            if entry[1].done() and not entry[1].cancelled():
                self.release(write)  # granted, then cancelled before it could run
            else:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                self._wake()  # a writer leaving the queue may let readers behind it in
            raise

    def release(self, write: bool) -> None:
        if write:
            self._writer = False
        else:
            self._readers -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiting:
            write, future = self._waiting[0]
            if future.cancelled():
                self._waiting.popleft()
                continue
            if not self._can(write):
                return
            self._waiting.popleft()
            self._take(write)
            future.set_result(None)


class FileLocks:
    """The engine's table of file locks, keyed by the file's resolved path."""

    def __init__(self) -> None:
        self._locks: dict[Path, RWLock] = {}

    def __len__(self) -> int:
        return len(self._locks)

    def lock_of(self, path: Path) -> RWLock | None:
        return self._locks.get(path)

    @asynccontextmanager
    async def hold(self, path: Path, *, write: bool) -> AsyncIterator[None]:
        """Hold ``path`` for reading or writing; released on any exit, cancel included."""
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = RWLock()
        try:
            await lock.acquire(write)
        except BaseException:
            self._drop_if_idle(path, lock)
            raise
        try:
            yield
        finally:
            lock.release(write)
            self._drop_if_idle(path, lock)

    def _drop_if_idle(self, path: Path, lock: RWLock) -> None:
        if lock.idle and self._locks.get(path) is lock:
            del self._locks[path]
