"""Watches a workspace and reports which files really changed.

Watchdog's observer thread only forwards *which paths to look at* to the
asyncio loop (``call_soon_threadsafe``). The loop collects them until the
workspace has been quiet for ``debounce_s`` (or ``max_delay_s`` has passed
since the first one), then re-hashes those paths in a worker thread and
compares the digests with the ones it knows. Reporting the difference between
known and current state, rather than translating events one by one, is what
makes a touch report nothing, an atomic save report only its target, and a
rename report the source as deleted and the destination as created.

Paths are filtered through the workspace's
:class:`~backend.knowledge.watch.ignore.IgnorePolicy`, the code index's own:
by name on watchdog's thread, and with the ``.gitignore`` files as they are at
reconciliation, before a batch is counted. A build that writes hundreds of
files into ``build/`` or a gitignored ``out/`` reports nothing, rather than a
bulk change that would make every consumer start over.

When the observer dies or the kernel drops events, the watcher cannot know
what it missed, so it restarts the observer and re-hashes the whole tree.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import posixpath
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import SylkError
from backend.knowledge.watch.hashes import WorkspacePaths, hash_candidates, scan_workspace
from backend.knowledge.watch.ignore import IgnorePolicy, is_ignore_file

if TYPE_CHECKING:  # watchdog (through .observer) loads when a watcher starts, not at import
    from watchdog.observers.api import BaseObserver

    from backend.knowledge.watch.observer import Candidate, OverflowAlarm

log = logging.getLogger("sylk.knowledge.watcher")


def _stop_observer(observer: BaseObserver) -> None:
    from backend.knowledge.watch.observer import stop_observer

    stop_observer(observer)


class FileWatcherError(SylkError):
    """The workspace cannot be watched."""


@dataclass(frozen=True)
class ChangeBatch:
    """Files whose content changed, as workspace-relative posix paths.

    With ``bulk`` set, so many files changed at once (a checkout, a rebase)
    that consumers should drop what they derived from the workspace and
    rebuild lazily rather than invalidate path by path; the sets are still
    complete.
    """

    sequence: int
    created: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    bulk: bool = False

    @property
    def paths(self) -> frozenset[str]:
        return self.created | self.modified | self.deleted

    def __len__(self) -> int:
        return len(self.created) + len(self.modified) + len(self.deleted)


ChangeCallback = Callable[[ChangeBatch], Awaitable[None] | None]


@dataclass
class _Pending:
    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    first_at: float | None = None
    last_at: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.files or self.dirs)


class FileWatcher:
    """Reports content changes in a workspace to ``on_changes``, one batch at a time."""

    def __init__(
        self,
        root: Path,
        *,
        on_changes: ChangeCallback,
        debounce_s: float = 0.1,
        max_delay_s: float | None = None,
        batch_threshold: int = 100,
        ignore: Iterable[str] = (),
        policy: IgnorePolicy | None = None,
        health_interval_s: float = 1.0,
    ) -> None:
        """``ignore``: extra fnmatch patterns to leave out, on top of the default
        policy; or ``policy``: the one to share (the code index's)."""
        resolved = root.resolve()
        if not resolved.is_dir():
            raise FileWatcherError(f"cannot watch {root}: not a directory")
        extra = tuple(ignore)
        if policy is not None and extra:
            raise FileWatcherError(
                "give either extra ignore patterns or an ignore policy, not both",
                help_hint="put the patterns in the IgnorePolicy",
            )
        self.root = resolved
        self._paths = WorkspacePaths(resolved)
        self._policy = policy if policy is not None else IgnorePolicy(resolved, extra)
        self._on_changes = on_changes
        self._debounce_s = debounce_s
        self._max_delay_s = max_delay_s if max_delay_s is not None else max(1.0, 10 * debounce_s)
        self._batch_threshold = batch_threshold
        self._health_interval_s = health_interval_s

        self._known: dict[str, str] = {}
        self._sequence = 0
        self._pending = _Pending()
        self._lock = asyncio.Lock()  # one reconciliation at a time
        self._batches: asyncio.Queue[ChangeBatch] = asyncio.Queue()
        self._observer: BaseObserver | None = None
        self._alarm: OverflowAlarm | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._recovering = False
        self._started = False
        self._closed = False
        self.restarts = 0

    # -- public ---------------------------------------------------------------

    @property
    def known_hashes(self) -> Mapping[str, str]:
        """A copy of the digest the watcher holds for every file it tracks."""
        return dict(self._known)

    @property
    def healthy(self) -> bool:
        return (
            self._started and not self._closed and not self._recovering and self._observer_alive()
        )

    async def start(self) -> None:
        """Watch first, then learn the tree, so no change falls between the two."""
        if self._started:
            return
        from backend.knowledge.watch.observer import OverflowAlarm

        self._loop = asyncio.get_running_loop()
        self._alarm = OverflowAlarm(self._loop, self._on_overflow)
        logging.getLogger("watchdog.observers").addHandler(self._alarm)
        self._spawn(self._deliver_batches())
        try:
            self._observer = await asyncio.to_thread(self._start_observer)
        except OSError as exc:
            await self.aclose()
            raise FileWatcherError(
                f"cannot watch {self.root}: {exc}",
                help_hint="on Linux, raise fs.inotify.max_user_watches",
            ) from exc
        async with self._lock:
            self._known = await asyncio.to_thread(scan_workspace, self.root, self._policy)
        self._started = True
        if self._health_interval_s > 0:
            self._spawn(self._watch_health())

    async def rescan(self) -> ChangeBatch | None:
        """Re-hash the whole tree and report how it differs from what was known."""
        async with self._lock:
            fresh = await asyncio.to_thread(scan_workspace, self.root, self._policy)
            current: dict[str, str | None] = dict.fromkeys(self._known)
            current.update(fresh)
            return self._record(current)

    async def check_health(self) -> bool:
        """Restart the observer and rescan if it is not running; True if it was fine."""
        if not self._started or self._closed or self._recovering:
            return True
        if self._observer_alive():
            return True
        await self._recover("the observer thread stopped")
        return False

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._alarm is not None:
            logging.getLogger("watchdog.observers").removeHandler(self._alarm)
        observer, self._observer = self._observer, None
        if observer is not None:
            await asyncio.to_thread(_stop_observer, observer)
        owned = [*self._tasks, *([self._flush_task] if self._flush_task else [])]
        for task in owned:
            task.cancel()
        await asyncio.gather(*owned, return_exceptions=True)
        self._tasks.clear()
        self._flush_task = None

    async def __aenter__(self) -> FileWatcher:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # -- observer -------------------------------------------------------------

    def _start_observer(self) -> BaseObserver:
        from backend.knowledge.watch.observer import EventForwarder, start_observer

        assert self._loop is not None
        handler = EventForwarder(self._loop, self._paths, self._policy, self._note)
        return start_observer(self.root, handler)

    def _observer_alive(self) -> bool:
        if self._observer is None:
            return False
        from backend.knowledge.watch.observer import observer_alive

        return observer_alive(self._observer)

    async def _recover(self, reason: str) -> None:
        if self._recovering or self._closed:
            return
        self._recovering = True
        log.warning("file watcher for %s: %s; restarting and rescanning", self.root, reason)
        try:
            old, self._observer = self._observer, None
            if old is not None:
                await asyncio.to_thread(_stop_observer, old)
            try:
                fresh = await asyncio.to_thread(self._start_observer)
            except OSError:
                log.exception("file watcher for %s cannot restart; will retry", self.root)
            else:
                if self._closed:  # aclose() ran while the new observer was starting
                    await asyncio.to_thread(_stop_observer, fresh)
                    return
                self._observer = fresh
            self.restarts += 1
            await self.rescan()
        finally:
            self._recovering = False

    def _on_overflow(self) -> None:
        if self._started and not self._closed:
            self._spawn(self._recover("the kernel dropped file events"))

    async def _watch_health(self) -> None:
        while True:
            await asyncio.sleep(self._health_interval_s)
            try:
                await self.check_health()
            except Exception:
                log.exception("file watcher health check failed for %s", self.root)

    # -- debounce and reconcile -------------------------------------------------

    def _note(self, found: list[Candidate]) -> None:
        """On the loop: remember paths to look at and (re)arm the debounce."""
        if self._closed or self._loop is None:
            return
        now = self._loop.time()
        pending = self._pending
        for rel, is_dir in found:
            (pending.dirs if is_dir else pending.files).add(rel)
        if pending.first_at is None:
            pending.first_at = now
        pending.last_at = now
        if self._flush_task is None:
            self._flush_task = asyncio.create_task(self._debounce_then_flush())

    async def _debounce_then_flush(self) -> None:
        assert self._loop is not None
        try:
            while True:
                first = self._pending.first_at
                if first is None:
                    return
                due = min(self._pending.last_at + self._debounce_s, first + self._max_delay_s)
                wait = due - self._loop.time()
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            await self._flush()
        except Exception:
            log.exception("file watcher for %s failed to process changes", self.root)
        finally:
            self._flush_task = None
        if self._pending and not self._closed:
            self._flush_task = asyncio.create_task(self._debounce_then_flush())

    async def _flush(self) -> None:
        async with self._lock:
            pending, self._pending = self._pending, _Pending()
            if not self._started:
                return  # start()'s scan, which ran under the lock, saw these already
            candidates = set(pending.files)
            for rel in pending.dirs:
                prefix = rel + "/"
                candidates.add(rel)
                candidates.update(k for k in self._known if k.startswith(prefix))
            # An edited ignore file may hide known files or show new ones below it.
            bases = {posixpath.dirname(rel) for rel in candidates if is_ignore_file(rel)}
            below = {
                rel: digest
                for rel, digest in self._known.items()
                if rel not in candidates and _is_below(rel, bases)
            }
            current = await asyncio.to_thread(
                hash_candidates, self._paths, self._policy, candidates, pending.dirs, bases, below
            )
            self._record(current)

    def _record(self, current: Mapping[str, str | None]) -> ChangeBatch | None:
        """Apply current digests to the known ones; queue and return the difference."""
        created: set[str] = set()
        modified: set[str] = set()
        deleted: set[str] = set()
        for rel, digest in current.items():
            old = self._known.get(rel)
            if digest == old:
                continue
            if digest is None:
                deleted.add(rel)
                del self._known[rel]
            else:
                (modified if old is not None else created).add(rel)
                self._known[rel] = digest
        total = len(created) + len(modified) + len(deleted)
        if total == 0:
            return None
        self._sequence += 1
        batch = ChangeBatch(
            sequence=self._sequence,
            created=frozenset(created),
            modified=frozenset(modified),
            deleted=frozenset(deleted),
            bulk=total > self._batch_threshold,
        )
        self._batches.put_nowait(batch)
        return batch

    async def _deliver_batches(self) -> None:
        # A separate task, so a consumer may call rescan() from its callback.
        while True:
            batch = await self._batches.get()
            try:
                result = self._on_changes(batch)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("file change consumer failed on batch %d", batch.sequence)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _is_below(rel: str, bases: set[str]) -> bool:
    return any(not base or rel.startswith(base + "/") for base in bases)
