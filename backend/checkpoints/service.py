"""Checkpoints: one per agent turn that changed files, undone one by one, diffed whole.

A turn of an agent that may write opens a :class:`TurnCheckpoint` (``TurnRunner``
does, and marks it current for the turn's task). Before the turn's first change (a
write op that is not a dry run: the engine's pre-tool hook calls
:meth:`TurnCheckpoint.before_change`) the workspace is snapshotted; when the turn
ends it is snapshotted again, and if the two differ a ``turn`` entry is appended to
the session's hidden ref. Turns that only read cost nothing.

Turns that overlap in one workspace: a change is credited to the turn that ends
first (a turn that ends after another one's checkpoint takes that checkpoint's
``after`` as its ``before``), so no change is in two checkpoints.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from backend.checkpoints.records import (
    CheckpointEntry,
    FileChange,
    NothingToUndoError,
    SessionDiff,
    UndoConflictError,
    UndoOutcome,
    open_turns,
    session_ref,
)
from backend.checkpoints.restore import Restoration, restore
from backend.checkpoints.shadow_repo import MAX_FILE_BYTES, ShadowRepo, Snapshot
from backend.clock import utc_now
from backend.errors import SylkError
from backend.workspace.confinement import Confinement

log = logging.getLogger("sylk.checkpoints")

MAX_DIFF_BYTES = 256 * 1024
_CURRENT: contextvars.ContextVar[TurnCheckpoint | None] = contextvars.ContextVar(
    "sylk_turn_checkpoint", default=None
)


def current_turn() -> TurnCheckpoint | None:
    """The checkpoint of the agent turn running in this task, if any."""
    return _CURRENT.get()


class Checkpoints:
    """Every workspace's shadow repository under ``data_dir``, and the sessions' refs."""

    def __init__(
        self,
        data_dir: Path,
        confine: Callable[[Path], Confinement] = lambda _: Confinement(),
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.data_dir = data_dir
        self._confine = confine
        self._max_file_bytes = max_file_bytes
        self._repos: dict[Path, ShadowRepo] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # Per workspace: how many checkpoints were recorded, and the last one's ``after``.
        self._recorded: dict[Path, tuple[int, str]] = {}

    def repo(self, workspace: Path) -> ShadowRepo:
        root = workspace.resolve()
        if root not in self._repos:
            protected = self._confine(root).protected
            self._repos[root] = ShadowRepo(
                self.data_dir, root, protected, max_file_bytes=self._max_file_bytes
            )
        return self._repos[root]

    def lock(self, session_id: str) -> asyncio.Lock:
        """One snapshot, record or undo at a time per session (it has one index)."""
        return self._locks.setdefault(session_id, asyncio.Lock())

    def turn(self, session_id: str, role: str, workspace: Path) -> TurnCheckpoint:
        return TurnCheckpoint(self, session_id, role, workspace)

    async def entries(self, session_id: str, workspace: Path) -> list[CheckpointEntry]:
        """The session's entries, newest first (none before its first change)."""
        repo = self.repo(workspace)
        ref = session_ref(session_id)
        await repo.ensure()
        if await repo.read_ref(ref) is None:
            return []
        parsed = (CheckpointEntry.parse(c, m) for c, m in await repo.log(ref))
        return [e for e in parsed if e is not None]

    # -- recording ------------------------------------------------------------------
    async def snapshot(self, session_id: str, workspace: Path) -> Snapshot:
        session_ref(session_id)  # the id names the session's index file: checked first
        repo = self.repo(workspace)
        return await repo.snapshot(repo.index_of(session_id))

    def recorded(self, workspace: Path) -> tuple[int, str | None]:
        count, after = self._recorded.get(workspace.resolve(), (0, ""))
        return count, after or None

    async def append(self, session_id: str, workspace: Path, entry: CheckpointEntry) -> str:
        """Commit ``entry`` on the session's ref (a start entry first if it has none)."""
        repo = self.repo(workspace)
        ref = session_ref(session_id)
        head = await repo.read_ref(ref)
        tree = await repo.make_tree(before=entry.before, after=entry.after)
        commit = await repo.commit(tree, head, entry.message())
        await repo.move_ref(ref, commit, head)
        if entry.kind != "start":
            count, _ = self.recorded(workspace)
            self._recorded[repo.workspace] = (count + 1, entry.after)
        return commit

    async def ensure_start(self, session_id: str, workspace: Path, tree: str) -> None:
        repo = self.repo(workspace)
        if await repo.read_ref(session_ref(session_id)) is None:
            start = CheckpointEntry("", "start", tree, tree, utc_now().isoformat())
            await self.append(session_id, workspace, start)

    # -- undo -----------------------------------------------------------------------
    async def undo(self, session_id: str, workspace: Path) -> UndoOutcome:
        """Revert the session's last turn not undone yet, or refuse and change nothing."""
        repo = self.repo(workspace)
        async with self.lock(session_id):
            turns = open_turns(await self.entries(session_id, workspace))
            if not turns:
                raise NothingToUndoError()
            target = turns[0]
            changes = await repo.changes(target.before, target.after)
            now = await self.snapshot(session_id, workspace)
            since = {c.path for c in await repo.changes(target.after, now.tree)}
            touched = [c.path for c in changes]
            conflicts = sorted(p for p in touched if p in since or p in now.skipped)
            if conflicts:
                raise UndoConflictError(conflicts)
            kept = [c for c in changes if not c.created and c.old_mode != "160000"]
            blobs = await repo.blobs(c.old_oid for c in kept)
            items = [
                Restoration(c.path, None if c.created else c.old_mode, blobs.get(c.old_oid, b""))
                for c in changes
                if c.old_mode != "160000" and c.new_mode != "160000"
            ]
            keep_dirs = await repo.directories(target.before)
            await asyncio.to_thread(
                restore, repo.workspace, items, keep_dirs=keep_dirs, protected=repo.protected
            )
            after = await self.snapshot(session_id, workspace)
            record = CheckpointEntry(
                "", "undo", now.tree, after.tree, utc_now().isoformat(),
                turn_id=target.turn_id, role=target.role, undoes=target.commit,
            )  # fmt: skip
            await self.append(session_id, workspace, record)
        return UndoOutcome(
            turn_id=target.turn_id,
            role=target.role,
            restored=sorted(c.path for c in changes if not c.created and not c.deleted),
            removed=sorted(c.path for c in changes if c.created),
            recreated=sorted(c.path for c in changes if c.deleted),
            remaining=len(turns) - 1,
            skipped=target.skipped,
        )

    # -- diff -----------------------------------------------------------------------
    async def diff(
        self, session_id: str, workspace: Path, *, limit: int = MAX_DIFF_BYTES
    ) -> SessionDiff:
        """The workspace now against the session's start: the files, and a bounded patch."""
        repo = self.repo(workspace)
        async with self.lock(session_id):
            entries = await self.entries(session_id, workspace)
            if not entries:
                return SessionDiff(started=False)
            start = entries[-1].before
            now = await self.snapshot(session_id, workspace)
        changes = await repo.changes(start, now.tree)
        files = [
            FileChange(c.path, "added" if c.created else "deleted" if c.deleted else "modified")
            for c in changes
        ]
        raw = await repo.patch(start, now.tree, limit + 1)
        if len(raw) <= limit:
            text, shown = raw.decode("utf-8", "replace"), len(files)
        else:
            text, shown = _whole_files(raw, limit)
        return SessionDiff(True, files, _plain_binary(text), shown, now.skipped)


class TurnCheckpoint:
    """One agent turn's checkpoint: ``before`` on its first change, ``after`` at its end.

    Used as ``async with checkpoints.turn(...) as turn:`` around the turn; inside,
    :func:`current_turn` returns it. Set ``turn_id`` before the block ends.
    """

    def __init__(self, owner: Checkpoints, session_id: str, role: str, workspace: Path) -> None:
        self.owner = owner
        self.session_id = session_id
        self.role = role
        self.workspace = workspace
        self.turn_id: str | None = None
        self.before: Snapshot | None = None
        self.recorded: CheckpointEntry | None = None
        self._seen = 0  # checkpoints recorded in the workspace when ``before`` was taken
        self._token: contextvars.Token[TurnCheckpoint | None] | None = None

    async def before_change(self) -> None:
        """Snapshot the workspace before the turn's first change (once per turn)."""
        if self.before is not None:
            return
        async with self.owner.lock(self.session_id):
            if self.before is not None:
                return
            self._seen, _ = self.owner.recorded(self.workspace)
            snap = await self.owner.snapshot(self.session_id, self.workspace)
            await self.owner.ensure_start(self.session_id, self.workspace, snap.tree)
            self.before = snap

    async def finish(self) -> CheckpointEntry | None:
        """Snapshot again; record a checkpoint if the turn changed anything."""
        if self.before is None:
            return None
        async with self.owner.lock(self.session_id):
            after = await self.owner.snapshot(self.session_id, self.workspace)
            count, latest = self.owner.recorded(self.workspace)
            base = latest if count > self._seen and latest else self.before.tree
            if after.tree == base:
                return None
            skipped = tuple(sorted({*self.before.skipped, *after.skipped}))
            entry = CheckpointEntry(
                "", "turn", base, after.tree, utc_now().isoformat(),
                turn_id=self.turn_id, role=self.role, skipped=skipped,
            )  # fmt: skip
            commit = await self.owner.append(self.session_id, self.workspace, entry)
            self.recorded = dataclasses.replace(entry, commit=commit)
            return self.recorded

    async def __aenter__(self) -> TurnCheckpoint:
        self._token = _CURRENT.set(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
        try:
            # Shielded: a second cancel must not lose the record of what the turn changed.
            await asyncio.shield(self.finish())
        except (SylkError, OSError) as error:  # the turn's answer stands without one
            log.warning("no checkpoint for turn %s: %s", self.turn_id, error)


def _whole_files(raw: bytes, limit: int) -> tuple[str, int]:
    """A patch longer than ``limit``, cut before the first file that does not fit."""
    heads = [0]
    at = raw.find(b"\ndiff --git ")
    while at != -1:
        heads.append(at + 1)
        at = raw.find(b"\ndiff --git ", at + 1)
    shown = 0
    while shown + 1 < len(heads) and heads[shown + 1] <= limit:
        shown += 1
    return raw[: heads[shown]].decode("utf-8", "replace"), shown


def _plain_binary(text: str) -> str:
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if line.startswith("Binary files ") and line.endswith(" differ"):
            lines[n] = "binary changed"
    return "\n".join(lines)
