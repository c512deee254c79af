"""Which files in a library folder are fragments, and the watcher that marks folders stale.

The watcher does as little as possible on watchdog's thread: it calls ``mark``
(a ``threading.Event.set``), and the library rescans on its next read. Our own
reads produce "opened" and "closed without writing" events, which are ignored,
or every query would trigger a rescan.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
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

log = logging.getLogger("sylk.knowledge.library")

_WATCHED = frozenset(
    {
        EVENT_TYPE_CREATED,
        EVENT_TYPE_MODIFIED,
        EVENT_TYPE_MOVED,
        EVENT_TYPE_DELETED,
        EVENT_TYPE_CLOSED,
    }
)


def fragment_files(root: Path) -> list[Path]:
    """The fragment files under ``root``: hidden paths and READMEs are not fragments."""
    out = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or path.name.lower() == "readme.md":
            continue
        out.append(path)
    return out


class _DirtyFlag(FileSystemEventHandler):
    def __init__(self, mark: Callable[[], None]) -> None:
        self._mark = mark

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _WATCHED:
            self._mark()


class FolderWatch:
    """One watchdog observer over several folders (those that exist when it starts)."""

    def __init__(self, folders: Sequence[Path], mark: Callable[[], None]) -> None:
        self._observer: BaseObserver | None = None
        existing = [p for p in folders if p.is_dir()]
        if not existing:
            return
        observer = Observer()
        handler = _DirtyFlag(mark)
        for folder in existing:
            try:
                observer.schedule(handler, os.fspath(folder.resolve()), recursive=True)
            except OSError as exc:
                log.warning("library: cannot watch %s (%s); rescanning on each query", folder, exc)
        observer.daemon = True
        observer.start()
        self._observer = observer

    @property
    def alive(self) -> bool:
        observer = self._observer
        return (
            observer is not None
            and observer.is_alive()
            and all(e.is_alive() for e in observer.emitters)
        )

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
