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
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # watchdog loads only when a folder is watched (sylk run watches none)
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

log = logging.getLogger("sylk.knowledge.library")


def fragment_files(root: Path) -> list[Path]:
    """The fragment files under ``root``: hidden paths and READMEs are not fragments."""
    out = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or path.name.lower() == "readme.md":
            continue
        out.append(path)
    return out


def _dirty_flag(mark: Callable[[], None]) -> FileSystemEventHandler:
    """A handler that calls ``mark`` on a change (never on our own reads' events)."""
    from watchdog import events

    watched = frozenset(
        {
            events.EVENT_TYPE_CREATED,
            events.EVENT_TYPE_MODIFIED,
            events.EVENT_TYPE_MOVED,
            events.EVENT_TYPE_DELETED,
            events.EVENT_TYPE_CLOSED,
        }
    )

    class DirtyFlag(events.FileSystemEventHandler):
        def on_any_event(self, event: events.FileSystemEvent) -> None:
            if event.event_type in watched:
                mark()

    return DirtyFlag()


class FolderWatch:
    """One watchdog observer over several folders (those that exist when it starts)."""

    def __init__(self, folders: Sequence[Path], mark: Callable[[], None]) -> None:
        self._observer: BaseObserver | None = None
        existing = [p for p in folders if p.is_dir()]
        if not existing:
            return
        from watchdog.observers import Observer

        observer = Observer()
        handler = _dirty_flag(mark)
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
