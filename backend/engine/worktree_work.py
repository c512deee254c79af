"""Each session in its own git worktree: the engine's side of ``backend.worktrees``.

A session made in a git repository (isolation on: ``[sessions] git_isolation``, or
the session's own ``SessionConfig.enable_git_isolation``) moves at once into a new
worktree on its own branch; its workspace becomes that worktree, so every agent op,
the watcher, checkpoints and the code index follow it with no change of theirs. An
archived session without one gets it before its next agent turn; one whose worktree
was deleted by hand has it made again from its branch, and is told. Merging back is
only ever asked for (``/session merge``); closing or deleting removes the worktree,
keeping unmerged work on its branch.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from backend.config.settings import SylkConfig
from backend.engine.session_service import SessionService
from backend.errors import CommandError
from backend.events import EngineNotice, EventStream
from backend.sessions.models import Session, SessionConfig
from backend.worktrees import (
    MERGE_MODES,
    MergeMode,
    NoRepositoryError,
    NotIsolatedError,
    SessionWorktrees,
    WorktreeError,
    merge_branch,
)
from backend.worktrees.session_view import (
    METADATA_KEY,
    isolation_line,
    isolation_off_reason,
    worktree_of,
)

if TYPE_CHECKING:
    from backend.engine.parts import EngineParts

log = logging.getLogger(__name__)

KEPT_ON_BRANCH = "unmerged work is kept"
"""Words of a removal's answer when the branch stays (``SessionWorktrees.remove``)."""


class WorktreeWork:
    """``enabled``: the config's default for sessions that do not say; ``events`` hears
    what a deleted session's worktree left behind (its transcript goes with it)."""

    def __init__(
        self,
        sessions: SessionService,
        data_dir: Path,
        *,
        enabled: bool,
        events: EventStream | None = None,
    ) -> None:
        self._sessions = sessions
        self._events = events
        self._data_dir = data_dir
        self._trees = SessionWorktrees(data_dir / "worktrees")
        self._enabled = enabled
        self._locks: dict[str, asyncio.Lock] = {}
        self.last_said: dict[str, str] = {}  # what removing each worktree did (for replies)

    def install(self) -> WorktreeWork:
        self._sessions.on_create(self.isolate)
        self._sessions.on_discard(self.discard)
        return self

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    async def isolate(self, session: Session) -> Session:
        """Give a new session its worktree (or say, in its metadata, why it has none):
        its own ``config.enable_git_isolation``, else the config's default."""
        async with self._lock(session.id):
            return await self._isolate(session, session.config.enable_git_isolation)

    async def _isolate(self, session: Session, isolation: bool | None) -> Session:
        if not (self._enabled if isolation is None else isolation):
            why = "turned off in the config" if isolation is None else "turned off for this session"
            return await self._off(session, why)
        try:
            info = await self._trees.create(Path(session.workspace), session.name, session.id)
        except NoRepositoryError as exc:
            return await self._off(session, exc.reason)
        except WorktreeError as exc:
            log.warning("no worktree for session %s: %s", session.id, exc)
            return await self._off(session, f"git failed: {exc.message[:200]}")
        await self._seed_index(Path(info.original_workspace), Path(info.workspace))
        await self._sessions.set_workspace(session.id, info.workspace, info.branch, info.base)
        return await self._sessions.set_metadata(
            session.id, METADATA_KEY, info.model_dump(mode="json")
        )

    async def _off(self, session: Session, reason: str) -> Session:
        return await self._sessions.set_metadata(session.id, METADATA_KEY, {"off": reason})

    async def _seed_index(self, base: Path, new: Path) -> None:
        """The worktree's code index from the base tree's: only what differs is parsed."""
        from backend.knowledge.code.seed import seed_index_from  # the index's modules, on need

        try:
            await asyncio.to_thread(seed_index_from, base, new, self._data_dir)
        except Exception as exc:  # the index builds itself later; isolation goes on
            log.warning("seeding the code index of %s failed: %s", new, exc)

    async def ensure(self, session_id: str) -> str | None:
        """Before an agent turn: the session's worktree there (re-made if deleted, with a
        notice), or made now for a session archived before it had one."""
        session = self._sessions.get(session_id)
        if METADATA_KEY not in session.metadata:
            await self.isolate(session)
            return None
        info = worktree_of(session)
        if info is None:
            return None
        async with self._lock(session_id):
            notice = await self._trees.reopen(info)
        if notice is not None:
            await self._sessions.notice(session_id, notice)
        return notice

    async def merge(self, ref: str | None, mode: str) -> str:
        """``/session merge [ff|merge|squash]``: the session's branch into its base."""
        session = self._sessions.resolve(ref) if ref else self._sessions.active_session()
        if session is None:
            raise NotIsolatedError("(none)", "no session is active")
        info = worktree_of(session)
        if info is None:
            raise NotIsolatedError(session.name, isolation_off_reason(session) or "none")
        chosen = _mode(mode)
        async with self._lock(session.id):
            await self._trees.reopen(info)
            outcome = await merge_branch(self._trees, info, chosen, _label(session))
        if outcome.commit is not None:
            merged = info.model_copy(update={"merged": outcome.branch_tip})
            await self._sessions.set_metadata(
                session.id, METADATA_KEY, merged.model_dump(mode="json")
            )
        return outcome.text()

    async def discard(self, session_id: str) -> None:
        """On close or delete: the worktree goes; unmerged work stays on its branch.
        What was done is said in the transcript and, since a deleted session's transcript
        goes with it, as an engine notice too (a warning when work stays on a branch)."""
        session = self._sessions.get(session_id)
        info = worktree_of(session)
        if info is None:
            return
        async with self._lock(session_id):
            try:
                said = await self._trees.remove(info, _label(session))
            except WorktreeError as exc:
                said = f"the worktree {info.path} could not be removed: {exc.message}"
        self._locks.pop(session_id, None)
        self.last_said[session_id] = said
        await self._sessions.notice(session_id, said)
        if self._events is not None:
            level = "warning" if KEPT_ON_BRANCH in said else "info"
            text = f"Session {_label(session)}: {said}"
            self._events.publish(EngineNotice(session_id=session_id, level=level, text=text))

    def status_line(self, session_id: str) -> str:
        return isolation_line(self._sessions.get(session_id))


def _mode(mode: str) -> MergeMode:
    for known in MERGE_MODES:
        if mode == known:
            return known
    raise CommandError(f"unknown merge mode {mode!r}", help_hint="/session merge [ff|merge|squash]")


def _label(session: Session) -> str:
    return f"{session.name!r} ({session.short_id})"


def install_worktrees(
    sessions: SessionService,
    data_dir: Path,
    settings: SylkConfig,
    events: EventStream | None = None,
) -> WorktreeWork:
    """The engine's worktrees, hooked to session creation, close and delete."""
    enabled = isolation_default(settings)
    return WorktreeWork(sessions, data_dir, enabled=enabled, events=events).install()


def isolation_default(settings: SylkConfig) -> bool:
    """``[sessions] git_isolation`` (on unless the config turns it off)."""
    return settings.sessions.git_isolation


class WorktreeVerbs:
    """The engine's verbs on isolation: a base of :class:`~backend.engine.Engine` (which
    keeps its parts in ``_parts``), so the facade stays one class under its size."""

    _parts: EngineParts

    async def create_session(
        self, name: str | None = None, *, activate: bool = True, isolation: bool | None = None
    ) -> Session:
        """Create a session in this engine's workspace and, by default, switch to it;
        ``isolation`` False works in place, True asks for a worktree, None follows
        ``[sessions] git_isolation``."""
        config = SessionConfig(enable_git_isolation=isolation)
        return await self._parts.sessions.create_session(name, activate=activate, config=config)

    async def merge_session(self, ref: str | None = None, mode: str = "ff") -> str:
        """``/session merge``: the session's branch into its base, or why it cannot."""
        return await self._parts.worktrees.merge(ref, mode)

    def worktree_removal(self, session_id: str) -> str | None:
        """What closing or deleting the session did to its worktree (None: it had none)."""
        return self._parts.worktrees.last_said.get(session_id)
