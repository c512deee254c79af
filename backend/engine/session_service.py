"""Sessions and their transcripts: every change written to the archive, then announced.

:class:`SessionService` owns the session manager, the lock its changes run under
and the archive writes. A change is committed before the event announcing it is
published, so whatever a subscriber has seen survives a crash. It also writes the
transcript: each message (redacted) is appended, then announced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from backend.archive.phase_log import phase_history, sessions_with_phase_moves
from backend.archive.store import Archive
from backend.archive.team.ownership import TeamReach, owned_sessions
from backend.clock import utc_now
from backend.errors import CommandError
from backend.events import (
    ActiveSessionChanged,
    EventStream,
    MessageAppended,
    SessionChanged,
    SessionCreated,
    SessionPhaseChanged,
)
from backend.guide.routing.decision import RouteDecision
from backend.messages import Message, MessageType
from backend.redaction import Redactor
from backend.sessions.manager import SessionChange, SessionManager
from backend.sessions.models import (
    Session,
    SessionConfig,
    SessionContext,
    SessionSnapshot,
    SessionState,
)
from backend.sessions.ownership import SessionOwner, local_owner
from backend.sessions.phases import PhaseChange, SessionPhase

Transcript = list[Message[dict[str, Any]]]
Release = Callable[[str], Awaitable[None]]
Prepare = Callable[[Session], Awaitable[Session]]


class SessionService:
    """``promote`` runs when a session completes (the chronicle promotes its
    decisions); hooks added with :meth:`on_release` when one completes, fails or
    closes (its agents stop, its gateway state goes)."""

    def __init__(
        self,
        *,
        archive: Archive,
        events: EventStream,
        redactor: Redactor,
        workspace: Path,
        promote: Callable[[str], Awaitable[object]],
        owner: SessionOwner | None = None,
    ) -> None:
        self._archive = archive
        # Only the sessions this user made on this host: on a shared archive a
        # teammate's are never resumed, suspended, failed or deleted from here.
        self.owner = owner or local_owner()
        self.reach = TeamReach(archive, self.owner)  # what cross-session reads may reach
        self._events = events
        self._redactor = redactor
        self._workspace = workspace
        self._promote = promote
        self._release: list[Release] = []
        self._created: list[Prepare] = []  # a new session given its worktree
        self._discarded: list[Release] = []  # before a close or delete: its worktree goes
        self._manager = SessionManager(owned_sessions(archive, self.owner))  # asked of SQL
        self._changes: list[SessionChange] = []
        self._manager.add_listener(self._changes.append)
        self._lock = asyncio.Lock()

    def on_release(self, hook: Release) -> None:
        self._release.append(hook)

    def on_create(self, hook: Prepare) -> None:
        """``hook(session)`` runs on each new session once it is committed; returns it as
        it now is (moved into its own worktree)."""
        self._created.append(hook)

    def on_discard(self, hook: Release) -> None:
        """``hook(session_id)`` runs before a session is closed or deleted."""
        self._discarded.append(hook)

    async def close_archive(self) -> None:
        """Close the archive once no session change is being written."""
        async with self._lock:
            await asyncio.to_thread(self._archive.close)

    # -- queries -------------------------------------------------------------
    def get(self, session_id: str) -> Session:
        return self._manager.get(session_id)

    def state_of(self, session_id: str) -> SessionState:
        """The session's state, cheaply (no copy of the session)."""
        return self._manager.require(session_id)

    def resolve(self, ref: str) -> Session:
        return self._manager.resolve(ref)

    def list_sessions(self, *, include_closed: bool = False) -> list[Session]:
        return self._manager.list_all(include_closed=include_closed)

    def active_session(self) -> Session | None:
        return self._manager.get_active()

    @property
    def active_id(self) -> str | None:
        return self._manager.active_id

    def get_context(self, ref: str) -> SessionContext:
        return self._manager.get_context(self._manager.resolve(ref).id)

    async def transcript(self, session_id: str, *, limit: int | None = None) -> Transcript:
        self._manager.require(session_id)  # typed error for an unknown session
        return await self._archive.aload_transcript(session_id, limit=limit)

    def transcript_counts(self) -> dict[str, int]:
        return self._archive.transcript_counts()

    # -- committing changes -----------------------------------------------------
    async def _commit(self) -> None:
        """Persist the manager's pending changes, then announce them."""
        changes, self._changes[:] = list(self._changes), []
        if not changes:
            return
        latest = {c.session.id: c.session for c in changes}
        moves = [c.phase for c in changes if c.phase is not None]
        if moves:  # the phase and its log in one transaction
            await self._archive.awrite(sessions_with_phase_moves(latest.values(), moves))
        else:
            await self._archive.asave_sessions(latest.values())
        for change in changes:
            self._publish_change(change)

    def _publish_change(self, change: SessionChange) -> None:
        session = change.session
        if change.operation == "create":
            self._events.publish(SessionCreated(session_id=session.id, session=session))
            return
        if change.operation != "phase":  # a phase move is announced by its own event
            self._events.publish(
                SessionChanged(
                    session_id=session.id,
                    session=session,
                    operation=change.operation,
                    old_state=change.old,
                )
            )
        if change.phase is not None:
            moved = change.phase
            self._events.publish(
                SessionPhaseChanged(
                    session_id=session.id,
                    session=session,
                    old_phase=moved.old,
                    phase=moved.new,
                    reason=moved.reason,
                    approval=moved.approval,
                )
            )

    async def _run(self, op: Callable[[], Session]) -> Session:
        async with self._lock:
            before = self._manager.active_id
            try:
                result = op()
            finally:
                await self._commit()
            after = self._manager.active_id
            if after != before:
                self._events.publish(ActiveSessionChanged(session_id=after, previous_id=before))
            return result

    # -- lifecycle -----------------------------------------------------------------
    def _unique_name(self, name: str | None) -> str:
        taken = {s.name.casefold() for s in self._manager.list_all(include_closed=True)}
        if name and name.strip():
            base = name.strip()
            if base.casefold() not in taken:
                return base
        else:
            base = "session"
        n = 1 if base != "session" else len(taken) + 1
        while f"{base} {n}".casefold() in taken:
            n += 1
        return f"{base} {n}"

    async def create_session(
        self, name: str | None = None, *, activate: bool = True, config: SessionConfig | None = None
    ) -> Session:
        """Create a session in this engine's workspace and, by default, switch to it."""
        final = self._unique_name(name)
        workspace = str(self._workspace)

        def op() -> Session:
            session = self._manager.create(
                final, workspace=workspace, config=config, owner=self.owner
            )
            return self._manager.activate(session.id) if activate else session

        made = await self._run(op)
        for hook in self._created:
            made = await hook(made)
        return made

    async def ensure_session(self) -> Session:
        """The foreground session; the newest open one, or a new one, if none is."""
        active = self._manager.get_active()
        if active is not None:
            return active
        candidates = [s for s in self._manager.list_all() if not s.is_terminal]
        if candidates:
            latest = max(candidates, key=lambda s: s.last_active_at)
            return await self.switch_session(latest.id)
        return await self.create_session()

    async def switch_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.switch(target))

    def _ref_or_active(self, ref: str | None) -> str:
        if ref is not None:
            return self._manager.resolve(ref).id
        active = self._manager.active_id
        if active is None:
            raise CommandError("no session is active", help_hint="name the session")
        return active

    async def suspend_session(self, ref: str | None = None) -> Session:
        target = self._ref_or_active(ref)
        return await self._run(lambda: self._manager.suspend(target))

    async def resume_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.resume(target))

    async def complete_session(self, ref: str | None = None, summary: str | None = None) -> Session:
        target = self._ref_or_active(ref)
        done = await self._run(lambda: self._manager.complete(target, summary))
        await self._released(target)
        await self._promote(target)  # the chronicle promotes its decisions
        return done

    async def fail_session(self, ref: str, reason: str) -> Session:
        target = self._manager.resolve(ref).id
        failed = await self._run(lambda: self._manager.fail(target, reason))
        await self._released(target)
        return failed

    async def close_session(self, ref: str) -> Session:
        target = self._manager.resolve(ref).id
        closed = await self._run(lambda: self._manager.close(target))
        await self._discard(target)
        await self._released(target)
        return closed

    async def rename_session(self, ref: str, name: str) -> Session:
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.rename(target, name))

    async def delete_session(self, ref: str) -> Session:
        """Delete the session and all it owns from the archive (promoted chronicle entries
        stay: shared knowledge). Its agents stop first; then it is announced as a
        ``delete`` change whose session is closed, so every list drops it."""
        target = self._manager.resolve(ref).id
        await self._released(target)
        await self._discard(target)
        async with self._lock:
            before = self._manager.active_id
            await asyncio.to_thread(self._archive.delete_session, target)
            gone = self._manager.forget(target)
            gone.closed_at = utc_now()
            self._events.publish(
                SessionChanged(
                    session_id=target, session=gone, operation="delete", old_state=gone.state
                )
            )
            if self._manager.active_id != before:
                self._events.publish(ActiveSessionChanged(session_id=None, previous_id=before))
        return gone

    async def _released(self, session_id: str) -> None:
        for hook in self._release:
            await hook(session_id)

    async def _discard(self, session_id: str) -> None:
        for hook in self._discarded:
            await hook(session_id)

    async def update_context(self, ref: str, update: Callable[[SessionContext], None]) -> None:
        target = self._manager.resolve(ref).id

        def op() -> Session:
            self._manager.update_context(target, update)
            return self._manager.get(target)

        await self._run(op)

    async def set_metadata(self, ref: str, key: str, value: Any) -> Session:
        """Keep ``value`` in the session's metadata under ``key``, committed then announced."""
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.set_metadata(target, key, value))

    async def set_config(self, ref: str, config: SessionConfig) -> Session:
        """Keep the session's limits (``SessionManager.set_config``), committed then announced."""
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.set_config(target, config))

    async def set_workspace(
        self, ref: str, workspace: str, branch: str | None, base: str | None
    ) -> Session:
        """Move the session into its own worktree (``SessionManager.set_workspace``)."""
        target = self._manager.resolve(ref).id
        return await self._run(lambda: self._manager.set_workspace(target, workspace, branch, base))

    async def set_phase(
        self, ref: str, phase: SessionPhase, reason: str, *, approval: str | None = None
    ) -> Session:
        """Move the session's phase (``SessionManager.set_phase``), committed then announced.
        The reason and approval are stored and shown, so configured secrets are redacted."""
        target = self._manager.resolve(ref).id
        if self._redactor:
            reason = self._redactor.text(reason)
            approval = self._redactor.text(approval) if approval else approval
        return await self._run(
            lambda: self._manager.set_phase(target, phase, reason, approval=approval)
        )

    async def phase_history(self, ref: str) -> list[PhaseChange]:
        return await phase_history(self._archive, self._manager.resolve(ref).id)

    async def snapshot(self, ref: str) -> SessionSnapshot:
        session = self._manager.resolve(ref)
        count = self._archive.transcript_counts().get(session.id, 0)
        snap = self._manager.snapshot(session.id, transcript_count=count)
        await asyncio.to_thread(self._archive.save_snapshot, snap)
        return snap

    def snapshots(self, ref: str) -> list[SessionSnapshot]:
        return self._archive.load_snapshots(self._manager.resolve(ref).id)

    async def restore(self, snapshot: SessionSnapshot) -> Session:
        return await self._run(lambda: self._manager.restore(snapshot))

    # -- the transcript ----------------------------------------------------------
    async def append(self, message: Message[dict[str, Any]]) -> Message[dict[str, Any]]:
        """Commit one message to its session's transcript, then announce it; returns the
        message as stored (keys redacted), which is what callers may show."""
        self._manager.require(message.session_id)  # typed error for an unknown session
        if self._redactor:
            message = message.model_copy(update={"payload": self._redactor.data(message.payload)})
        now = utc_now()
        # Memory first: a session change committed meanwhile carries the new time too.
        self._manager.touch(message.session_id, at=now)
        await self._archive.aappend_messages([message], touched_at=now)
        self._events.publish(MessageAppended(session_id=message.session_id, message=message))
        return message

    async def notice(self, session_id: str, text: str, **extra: Any) -> Message[dict[str, Any]]:
        """A note from Sylk itself (an answer to a command, an error), recorded."""
        notice = Message[dict[str, Any]](
            session_id=session_id,
            source="sylk",
            target="user",
            type=MessageType.SYSTEM_NOTICE,
            payload={"text": text, **extra},
        )
        return await self.append(notice)

    async def record_input(
        self, session_id: str, text: str, decision: RouteDecision | None
    ) -> Message[dict[str, Any]]:
        """The user's line, with the Guide's decision when there is one."""
        payload: dict[str, Any] = {"text": text}
        if decision is not None:
            payload["route"] = decision.model_dump(mode="json")
        entry = Message[dict[str, Any]](
            session_id=session_id,
            source="user",
            target="guide",
            type=MessageType.USER_INPUT,
            payload=payload,
        )
        return await self.append(entry)
