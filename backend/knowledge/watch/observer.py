"""Watchdog's side of the file watcher: its observer thread and what it forwards.

:class:`EventForwarder` runs on watchdog's thread and only hands the loop the
paths worth a look (:data:`Candidate`), filtered by name through the workspace's
:class:`~backend.knowledge.watch.ignore.IgnorePolicy`. :class:`OverflowAlarm`
turns watchdog's log line about a kernel queue overflow into a call on the loop.
:func:`start_observer`, :func:`observer_alive` and :func:`stop_observer` run and
check the observer itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from backend.knowledge.watch.hashes import WorkspacePaths
from backend.knowledge.watch.ignore import IgnorePolicy

_FILE_EVENTS = frozenset(
    {
        EVENT_TYPE_CREATED,
        EVENT_TYPE_MODIFIED,
        EVENT_TYPE_MOVED,
        EVENT_TYPE_DELETED,
        EVENT_TYPE_CLOSED,
    }
)
# A directory's own "modified" only says a child changed; the child reports itself.
_DIR_EVENTS = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_MOVED, EVENT_TYPE_DELETED})
# (relative path, expand as a directory)
Candidate = tuple[str, bool]


class EventForwarder(FileSystemEventHandler):
    """Runs on watchdog's thread: filters and hands paths to the loop, nothing else."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        paths: WorkspacePaths,
        policy: IgnorePolicy,
        deliver: Callable[[list[Candidate]], None],
    ) -> None:
        self._loop = loop
        self._paths = paths
        self._policy = policy
        self._deliver = deliver

    def on_any_event(self, event: FileSystemEvent) -> None:
        wanted = _DIR_EVENTS if event.is_directory else _FILE_EVENTS
        if event.event_type not in wanted:
            return
        raw = [event.src_path]
        if event.event_type == EVENT_TYPE_MOVED and event.dest_path:
            raw.append(event.dest_path)
        found: list[Candidate] = []
        for item in raw:
            rel = self._paths.relative(os.fsdecode(item))
            if rel is None or rel == "." or self._policy.skips(rel, event.is_directory):
                continue
            found.append((rel, event.is_directory))
        if found:
            # An exception here would kill the observer thread; a closed loop
            # means the watcher is gone anyway.
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._deliver, found)


class OverflowAlarm(logging.Handler):
    """Watchdog only logs a kernel queue overflow; turn that log line into a rescan."""

    def __init__(self, loop: asyncio.AbstractEventLoop, alarm: Callable[[], None]) -> None:
        super().__init__(level=logging.WARNING)
        self._loop = loop
        self._alarm = alarm

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._alarm)


def start_observer(root: Path, handler: EventForwarder) -> BaseObserver:
    """A started daemon observer sending every event under ``root`` to ``handler``."""
    observer = Observer()
    observer.schedule(handler, os.fspath(root), recursive=True)
    observer.daemon = True
    observer.start()
    return observer


def observer_alive(observer: BaseObserver | None) -> bool:
    if observer is None or not observer.is_alive():
        return False
    return all(emitter.is_alive() for emitter in observer.emitters)


def stop_observer(observer: BaseObserver) -> None:
    with contextlib.suppress(RuntimeError):
        observer.stop()
        observer.join(timeout=5)
