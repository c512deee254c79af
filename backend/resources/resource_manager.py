"""The resource manager wired into an engine: file locks around file ops, conflict warnings.

The seam is the op's handler, not a pre/post-tool hook pair: the gateway runs no
post-tool hook when a call is cancelled, so a lock taken in a pre hook and freed in a
post hook would leak; and pre-tool hooks include the approval gate, which may wait on
the user for minutes (a lock held there would stall every other session's reads of
that file). So :meth:`ResourceManager.install` replaces the registered file ops with
the same skills whose handler holds the file's lock for exactly the handler's run
(``async with``: freed on error and cancel). Writes take the write lock and are
diffed against the file just before them; reads (and dry runs) take the read lock.

What each session changed comes from those writes and from the file-tracking hook's
record of any other write op (the same hook function, installed under this room's
name). Conflicts go to both sessions: a :class:`~backend.events.FileConflict` event
and a transcript notice each; :meth:`status_lines` lists the current ones for /status.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from backend.errors import SylkError
from backend.events import EngineEvent, FileConflict
from backend.resources.conflict_watch import Conflict, ConflictWatch, SessionPlace
from backend.resources.file_locks import FileLocks
from backend.resources.hunks import worktree_lines
from backend.sessions.models import Session, SessionState
from backend.skills.call_flags import is_dry_run
from backend.skills.gateway.gateway import Gateway
from backend.skills.hooks.builtin import FileTouch, file_tracking
from backend.skills.hooks.registry import Hook, HookKind, HookPriority
from backend.skills.models import Skill, SkillContext
from backend.skills.registry import Registry
from backend.workspace.files import Workspace

log = logging.getLogger("sylk.resources")

WRITE_OPS = ("engineer.file.write", "engineer.file.edit")
READ_OPS = ("engineer.file.read", "librarian.file.read")
LIVE = frozenset({SessionState.CREATED, SessionState.ACTIVE, SessionState.SUSPENDED})
Notice = Callable[..., Awaitable[Any]]
Handler = Callable[[SkillContext, BaseModel], Awaitable[Any]]


def place_of(session_id: str, workspace: Path, session: Session | None) -> SessionPlace:
    """A worktree session (``metadata["worktree"]``: ``repo_root`` (or ``repo``), ``path``,
    ``base``) is placed in its repository, relative
    to its worktree; any other shares the tree it works in."""
    tree = session.metadata.get("worktree") if session is not None else None
    if isinstance(tree, dict):
        repo, path, base = (
            tree.get("repo_root", tree.get("repo")),
            tree.get("path"),
            tree.get("base"),
        )
        if isinstance(repo, str) and isinstance(path, str) and isinstance(base, str):
            return SessionPlace(session_id, Path(repo).resolve(), Path(path).resolve(), base)
    root = workspace.resolve()
    return SessionPlace(session_id, root, root)


class ResourceManager:
    """One engine's file locks and conflict watch."""

    def __init__(
        self,
        *,
        session_of: Callable[[str], Session],
        notice: Notice,
        publish: Callable[[EngineEvent], None],
    ) -> None:
        self._session_of = session_of
        self._notice = notice
        self._publish = publish
        self.locks = FileLocks()
        self.watch = ConflictWatch(self._is_live)

    def _session(self, session_id: str) -> Session | None:
        try:
            return self._session_of(session_id)
        except SylkError:
            return None

    def _is_live(self, session_id: str) -> bool:
        session = self._session(session_id)
        return session is not None and session.state in LIVE and session.closed_at is None

    def place(self, session_id: str, workspace: Path) -> SessionPlace:
        return place_of(session_id, workspace, self._session(session_id))

    # -- installing ------------------------------------------------------------------
    def install(self, registry: Registry, hooks_install: Callable[[Hook], Hook]) -> None:
        """Wrap the file ops' handlers in their locks; record other writes' files."""
        for op, write in [*((o, True) for o in WRITE_OPS), *((o, False) for o in READ_OPS)]:
            skill = registry.get(op)
            if skill is not None:
                registry.unregister(op)
                registry.register(skill.model_copy(update={"handler": self.locked(skill, write)}))
        tracked = file_tracking(self._tracked).fn
        hooks_install(
            Hook("resource_file_tracking", HookKind.POST_TOOL, tracked, HookPriority.NORMAL)
        )

    def _tracked(self, touch: FileTouch) -> None:
        if touch.op in WRITE_OPS:
            return  # recorded by the lock wrapper, with its lines
        session = self._session(touch.session_id)
        if session is not None:
            self.watch.note_changed(
                self.place(touch.session_id, Path(session.workspace)), [touch.path]
            )

    def locked(self, skill: Skill, write: bool) -> Handler:
        handler = skill.handler

        async def run(ctx: SkillContext, params: BaseModel) -> Any:
            given = getattr(params, "path", None)
            try:
                real = (
                    await asyncio.to_thread(_resolve, ctx, given, write)
                    if isinstance(given, str)
                    else None
                )
            except (SylkError, OSError):
                real = None  # the handler says what is wrong with the path
            if real is None:
                return await handler(ctx, params)
            if not write or is_dry_run(ctx):
                async with self.locks.hold(real, write=False):
                    return await handler(ctx, params)
            return await self._write(ctx, params, handler, real)

        return run

    async def _write(
        self, ctx: SkillContext, params: BaseModel, handler: Handler, real: Path
    ) -> Any:
        workspace = ctx.workspace.resolve()
        place = self.place(ctx.session_id, workspace)
        rel = _under(real, place.root)
        async with self.locks.hold(real, write=True):
            before = await asyncio.to_thread(
                worktree_lines, workspace, _under(real, workspace) or ""
            )
            out = await handler(ctx, params)
            if rel is None:
                return out
            touched: dict[str, tuple[int, int]] = {}
            if place.shared:
                after = await asyncio.to_thread(
                    worktree_lines, workspace, _under(real, workspace) or ""
                )
                touched = self.watch.owners.record(real, ctx.session_id, before, after)
        try:
            await self._warn(await self.watch.written(place, rel, touched))
        except (SylkError, OSError) as exc:  # a warning that cannot be made never fails the write
            log.warning("conflict check of %s failed: %s", rel, exc)
        return out

    # -- warning ---------------------------------------------------------------------
    def _name(self, session_id: str) -> str:
        session = self._session(session_id)
        return f"{session.name} ({session.short_id})" if session is not None else session_id[:8]

    def text_for(self, conflict: Conflict, session_id: str) -> str:
        other = self._name(conflict.other(session_id))
        return f"Conflict: {conflict.path} is also changed by session {other}: {conflict.what}"

    async def _warn(self, conflicts: list[Conflict]) -> None:
        for conflict in conflicts:
            for sid in (conflict.first, conflict.second):
                text = self.text_for(conflict, sid)
                other = conflict.other(sid)
                self._publish(
                    FileConflict(
                        session_id=sid, path=conflict.path, other_session_id=other,
                        lines=conflict.lines, text=text,
                    )
                )  # fmt: skip
                extra = {
                    "conflict": {"path": conflict.path, "with": other, "lines": conflict.lines}
                }
                try:
                    await self._notice(sid, f"⚠ {text}", **extra)
                except SylkError as exc:  # a session that is not stored gets the event only
                    log.info("no conflict notice for %s: %s", sid, exc)

    def status_lines(self, session_id: str) -> list[str]:
        """``/status``: this session's current conflicts, one line each."""
        return [f"  {self.text_for(c, session_id)}" for c in self.watch.current(session_id)]

    def status_block(self, session_id: str) -> str:
        """The lines ``/status`` ends with while the session has conflicts ("" if none)."""
        lines = self.status_lines(session_id)
        return "\n\nConflicts with other live sessions:\n" + "\n".join(lines) if lines else ""


def _resolve(ctx: SkillContext, path: str, write: bool) -> Path:
    with Workspace(ctx.workspace, protected=ctx.confinement.protected) as ws:
        return ws.resolve_for_write(path) if write else ws.resolve(path)


def _under(real: Path, root: Path) -> str | None:
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        return None


class _Sessions(Protocol):
    def get(self, session_id: str) -> Session: ...

    async def notice(self, session_id: str, text: str, **extra: Any) -> Any: ...


class _Events(Protocol):
    def publish(self, event: EngineEvent) -> None: ...


def install_resources(gateway: Gateway, sessions: _Sessions, events: _Events) -> ResourceManager:
    """An engine's resource manager, its locks around the gateway's file ops."""
    manager = ResourceManager(
        session_of=sessions.get, notice=sessions.notice, publish=events.publish
    )
    manager.install(gateway.registry, gateway.hooks.install)
    return manager
