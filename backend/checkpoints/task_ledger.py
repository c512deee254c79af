"""Which files a plan's task changed, kept durably as it happens, and putting them back.

A task that is killed in the middle (``kill -9``, a crash, a shutdown) runs again from
its first turn when its DAG resumes. Its earlier edits must not stay under the new
attempt: an edit whose old text survives in its new text (an insertion, an append)
would land twice. So while a task's turns run (its name in :data:`TASK_TAG`, which the
dispatcher carries from the pipeline to the agent's turn), every edit is written down
*before* it lands: the path and the turn's checkpoint snapshot taken before its first
change (``base``: the file's content before the task touched it). After the edit the
file's git blob id is written down too (``after``). On resume,
:func:`roll_back_task` puts each such file back to its ``base`` content, but only
where the file still holds what the task's last edit left: a file someone changed
since is left alone and named. An edit in flight at the kill (no ``after``) is the
task's own and is put back too.

One SQLite file (``<data_dir>/task_edits.db``, 0600); every write is its own
transaction, so what was written survives a kill.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from backend.checkpoints.restore import Restoration, read_file, restore
from backend.checkpoints.service import Checkpoints
from backend.checkpoints.shadow_repo import EMPTY_OID

TASK_TAG: ContextVar[str | None] = ContextVar("sylk_task_tag", default=None)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS task_files (
    session_id TEXT NOT NULL, task TEXT NOT NULL, path TEXT NOT NULL,
    base_tree TEXT, after_oid TEXT,
    PRIMARY KEY (session_id, task, path)
)"""


def task_key(plan_id: str, node_id: str) -> str:
    """The tag of a plan's task (what its turns' edits are recorded under)."""
    return f"{plan_id}/{node_id}"


@contextmanager
def task_tag(tag: str | None) -> Iterator[None]:
    """Inside: the agent turns asked for belong to task ``tag`` (``plan/node``)."""
    token = TASK_TAG.set(tag)
    try:
        yield
    finally:
        TASK_TAG.reset(token)


def blob_oid(content: bytes | None) -> str:
    """Git's blob id of ``content`` (what a snapshot's tree holds); EMPTY_OID: absent."""
    if content is None:
        return EMPTY_OID
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class TouchedFile:
    path: str
    base_tree: str | None  # the workspace before the task first touched it (None: unknown)
    after_oid: str | None  # what the task's last edit left (None: an edit was in flight)


class TaskLedger:
    """The files each running task touched (see the module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        with closing(self._connect()) as db, db:
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA synchronous=FULL")
        return db

    def _write(self, sql: str, *args: object) -> None:
        with closing(self._connect()) as db, db:
            db.execute(sql, args)

    async def begin(self, session_id: str, task: str) -> None:
        """A new attempt of ``task``: what an earlier one touched is not its to put back."""
        await self.forget(session_id, task)

    async def forget(self, session_id: str, task: str) -> None:
        sql = "DELETE FROM task_files WHERE session_id = ? AND task = ?"
        await asyncio.to_thread(self._write, sql, session_id, task)

    async def touching(self, session_id: str, task: str, path: str, base: str | None) -> None:
        """Before an edit of ``path`` lands (the first one keeps its ``base``)."""
        sql = ("INSERT INTO task_files VALUES (?, ?, ?, ?, NULL) ON CONFLICT "
               "(session_id, task, path) DO UPDATE SET after_oid = NULL")  # fmt: skip
        await asyncio.to_thread(self._write, sql, session_id, task, path, base)

    async def touched(self, session_id: str, task: str, path: str, after: str) -> None:
        """After the edit: the file's content as it left it."""
        sql = "UPDATE task_files SET after_oid = ? WHERE session_id = ? AND task = ? AND path = ?"
        await asyncio.to_thread(self._write, sql, after, session_id, task, path)

    def files(self, session_id: str, task: str) -> list[TouchedFile]:
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT path, base_tree, after_oid FROM task_files WHERE session_id = ? "
                "AND task = ? ORDER BY path", (session_id, task),
            ).fetchall()  # fmt: skip
        return [TouchedFile(*row) for row in rows]


@dataclass
class RolledBack:
    """What :func:`roll_back_task` did to the files an interrupted attempt touched."""

    restored: list[str] = field(default_factory=list)  # back to their content before it
    removed: list[str] = field(default_factory=list)  # it created them: gone again
    kept: list[str] = field(default_factory=list)  # changed since by someone else: left
    unknown: list[str] = field(default_factory=list)  # no checkpoint of them: left

    @property
    def changed(self) -> bool:
        return bool(self.restored or self.removed)


def current_oid(workspace: Path, path: str, protected: tuple[str, ...] = ()) -> str:
    """The blob id of ``path`` in the workspace now (EMPTY_OID when absent)."""
    return blob_oid(read_file(workspace, path, protected))


async def roll_back_task(
    checkpoints: Checkpoints, ledger: TaskLedger, session_id: str, task: str, workspace: Path
) -> RolledBack:
    """Put back what ``task``'s interrupted attempt changed, where nobody changed it since."""
    done = RolledBack()
    touched = await asyncio.to_thread(ledger.files, session_id, task)
    if not touched:
        return done
    repo = checkpoints.repo(workspace)
    async with checkpoints.lock(session_id):
        now = await checkpoints.snapshot(session_id, workspace)
        items: list[Restoration] = []
        wanted: dict[str, str] = {}  # path -> blob to write back
        keep_dirs: set[str] = set()
        for base in dict.fromkeys(t.base_tree for t in touched):
            group = [t for t in touched if t.base_tree == base]
            if base is None:
                done.unknown += [t.path for t in group]
                continue
            changes = {c.path: c for c in await repo.changes(base, now.tree)}
            keep_dirs |= await repo.directories(base)
            for entry in group:
                change = changes.get(entry.path)
                if change is None:
                    continue  # as it was before the task: nothing to put back
                if entry.path in now.skipped or change.new_oid != (
                    entry.after_oid or change.new_oid):  # fmt: skip
                    done.kept.append(entry.path)
                elif change.created:
                    items.append(Restoration(entry.path, None))
                    done.removed.append(entry.path)
                else:
                    wanted[entry.path] = change.old_oid
                    items.append(Restoration(entry.path, change.old_mode))
                    done.restored.append(entry.path)
        blobs = await repo.blobs(wanted.values())
        items = [
            Restoration(i.path, i.mode, blobs[wanted[i.path]]) if i.path in wanted else i
            for i in items
        ]
        await asyncio.to_thread(
            restore, repo.workspace, items, keep_dirs=keep_dirs, protected=repo.protected
        )
    await ledger.forget(session_id, task)
    return done
