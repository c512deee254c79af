"""SessionManager: the lifecycle state machine, in memory and synchronous.

The manager owns the live sessions and enforces the seed's transitions. It does
no I/O: every change is reported to listeners as a :class:`SessionChange`, and
the Engine persists and publishes those. Callers only ever receive copies, so
one session's private context cannot be reached through another's handle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.clock import utc_now
from backend.errors import (
    AmbiguousSessionError,
    InvalidTransitionError,
    SessionNotFoundError,
)
from backend.sessions.models import (
    TRANSITIONS,
    Session,
    SessionConfig,
    SessionContext,
    SessionSnapshot,
    SessionState,
    allowed_operations,
)
from backend.sessions.naming import checked_name
from backend.sessions.ownership import SessionOwner
from backend.sessions.phases import (
    APPROVAL_MAX,
    REASON_MAX,
    PhaseChange,
    PhaseRequestError,
    PhaseTransitionError,
    SessionPhase,
    check_move,
    one_line,
)


@dataclass(frozen=True)
class SessionChange:
    """One session changed: ``operation`` took it from ``old`` to its state now;
    ``phase`` is set when the change moved its phase."""

    session: Session
    operation: str
    old: SessionState | None
    phase: PhaseChange | None = None


Listener = Callable[[SessionChange], None]


class SessionManager:
    def __init__(self, sessions: Iterable[Session] = ()) -> None:
        self._sessions: dict[str, Session] = {}
        self._listeners: list[Listener] = []
        for session in sorted(sessions, key=lambda s: s.created_at):
            self._sessions[session.id] = session.model_copy(deep=True)
        actives = [s for s in self._sessions.values() if s.state is SessionState.ACTIVE]
        # At most one session is in the foreground. An archive written by an
        # interrupted run could hold two; keep the most recently used one.
        actives.sort(key=lambda s: s.last_active_at)
        for stale in actives[:-1]:
            stale.state = SessionState.SUSPENDED
            stale.suspended_at = utc_now()
        self._active_id: str | None = actives[-1].id if actives else None

    # -- listeners -----------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _emit(
        self,
        session: Session,
        operation: str,
        old: SessionState | None,
        phase: PhaseChange | None = None,
    ) -> None:
        change = SessionChange(session.model_copy(deep=True), operation, old, phase)
        for listener in list(self._listeners):
            listener(change)

    # -- queries -------------------------------------------------------------
    def list_all(self, *, include_closed: bool = False) -> list[Session]:
        return [
            s.model_copy(deep=True)
            for s in self._sessions.values()
            if include_closed or s.closed_at is None
        ]

    def get(self, session_id: str) -> Session:
        return self._live(session_id).model_copy(deep=True)

    def require(self, session_id: str) -> SessionState:
        """The session's state, without copying it (a typed error for an unknown id): the
        check every transcript write and every delivery makes."""
        return self._live(session_id).state

    def get_active(self) -> Session | None:
        return self.get(self._active_id) if self._active_id else None

    @property
    def active_id(self) -> str | None:
        return self._active_id

    def by_state(self, state: SessionState) -> list[Session]:
        return [s for s in self.list_all() if s.state is state]

    def resolve(self, ref: str) -> Session:
        """Find a session by id, name, 1-based list position or unique id prefix."""
        ref = ref.strip()
        if not ref:
            raise SessionNotFoundError(ref)
        if ref in self._sessions:
            return self.get(ref)
        visible = [s for s in self._sessions.values() if s.closed_at is None]
        by_name = [s for s in visible if s.name.casefold() == ref.casefold()]
        if len(by_name) == 1:
            return by_name[0].model_copy(deep=True)
        if len(by_name) > 1:
            raise AmbiguousSessionError(ref, [s.short_id for s in by_name])
        if ref.isdigit() and 1 <= int(ref) <= len(visible):
            return visible[int(ref) - 1].model_copy(deep=True)
        by_prefix = [s for s in self._sessions.values() if s.id.startswith(ref.lower())]
        if len(by_prefix) == 1:
            return by_prefix[0].model_copy(deep=True)
        if len(by_prefix) > 1:
            raise AmbiguousSessionError(ref, [s.short_id for s in by_prefix])
        raise SessionNotFoundError(ref)

    def _live(self, session_id: str) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise SessionNotFoundError(session_id) from None

    # -- lifecycle -----------------------------------------------------------
    def create(
        self,
        name: str,
        *,
        workspace: str,
        config: SessionConfig | None = None,
        metadata: dict[str, Any] | None = None,
        base_branch: str | None = None,
        owner: SessionOwner | None = None,
    ) -> Session:
        session = Session(
            owner=owner,
            name=name.strip() or "session",
            workspace=workspace,
            config=config or SessionConfig(),
            metadata=dict(metadata or {}),
            base_branch=base_branch,
        )
        self._sessions[session.id] = session
        self._emit(session, "create", None)
        return session.model_copy(deep=True)

    def _transition(self, session_id: str, operation: str) -> Session:
        session = self._live(session_id)
        target = TRANSITIONS.get((session.state, operation))
        if target is None or session.closed_at is not None:
            allowed = [] if session.closed_at else allowed_operations(session.state)
            state = "closed" if session.closed_at else session.state.value
            raise InvalidTransitionError(session.id, state, operation, allowed)
        old = session.state
        now = utc_now()
        session.state = target
        session.last_active_at = now
        if target is SessionState.ACTIVE:
            session.activated_at = now
        elif target is SessionState.SUSPENDED:
            session.suspended_at = now
        elif target in (SessionState.COMPLETED, SessionState.FAILED):
            session.completed_at = now
        if self._active_id == session.id and target is not SessionState.ACTIVE:
            self._active_id = None
        self._emit(session, operation, old)
        return session.model_copy(deep=True)

    def _bring_to_front(self, session_id: str, operation: str) -> Session:
        session = self._live(session_id)
        if (session.state, operation) not in TRANSITIONS:
            # Refuse before touching the current foreground session.
            self._transition(session_id, operation)
        previous = self._active_id
        if previous is not None and previous != session_id:
            self._transition(previous, "suspend")
        result = self._transition(session_id, operation)
        self._active_id = session_id
        return result

    def activate(self, session_id: str) -> Session:
        """CREATED -> ACTIVE; the session in the foreground, if any, is suspended."""
        return self._bring_to_front(session_id, "activate")

    def resume(self, session_id: str) -> Session:
        """SUSPENDED -> ACTIVE; the session in the foreground, if any, is suspended."""
        return self._bring_to_front(session_id, "resume")

    def suspend(self, session_id: str) -> Session:
        return self._transition(session_id, "suspend")

    def complete(self, session_id: str, summary: str | None = None) -> Session:
        if summary:
            self._live(session_id).metadata["summary"] = summary
        return self._transition(session_id, "complete")

    def fail(self, session_id: str, reason: str) -> Session:
        session = self._live(session_id)
        if (session.state, "fail") in TRANSITIONS:
            session.metadata["failure"] = reason
        return self._transition(session_id, "fail")

    def close(self, session_id: str) -> Session:
        """Archive a session: hidden from lists, kept in the archive.

        A session in the foreground must be suspended or completed first, so
        closing never silently abandons running work.
        """
        session = self._live(session_id)
        if session.state is SessionState.ACTIVE or session.closed_at is not None:
            state = "closed" if session.closed_at else session.state.value
            raise InvalidTransitionError(
                session.id, state, "close", ["suspend", "complete"] if not session.closed_at else []
            )
        session.closed_at = utc_now()
        self._emit(session, "close", session.state)
        return session.model_copy(deep=True)

    def rename(self, session_id: str, name: str) -> Session:
        """Call the session ``name`` (``naming.checked_name``: one line, unique)."""
        session = self._live(session_id)
        others = (s.name for s in self._sessions.values() if s.id != session_id)
        session.name = checked_name(name, others)
        self._emit(session, "rename", session.state)
        return session.model_copy(deep=True)

    def forget(self, session_id: str) -> Session:
        """Drop the session from memory (its archive rows are deleted by the caller);
        the foreground is left empty if it was there. Announces nothing: the caller
        deletes it from the archive first, then says so."""
        session = self._sessions.pop(self._live(session_id).id)
        if self._active_id == session_id:
            self._active_id = None
        return session

    def switch(self, session_id: str) -> Session:
        """Make ``session_id`` the foreground session, suspending the current one."""
        session = self._live(session_id)
        if session.id == self._active_id:
            return session.model_copy(deep=True)
        operation = "activate" if session.state is SessionState.CREATED else "resume"
        return self._bring_to_front(session_id, operation)

    # -- context -------------------------------------------------------------
    def get_context(self, session_id: str) -> SessionContext:
        return self._live(session_id).context.model_copy(deep=True)

    def update_context(
        self, session_id: str, update: Callable[[SessionContext], None]
    ) -> SessionContext:
        """Apply ``update`` to a copy; the copy replaces the context only if valid."""
        session = self._live(session_id)
        draft = session.context.model_copy(deep=True)
        update(draft)
        session.context = SessionContext.model_validate(draft.model_dump(warnings=False))
        session.last_active_at = utc_now()
        self._emit(session, "context", session.state)
        return session.context.model_copy(deep=True)

    def set_metadata(self, session_id: str, key: str, value: Any) -> Session:
        """Keep ``value`` under ``metadata[key]`` (a part's own small settings, e.g. the
        session's approval mode); ``None`` removes it."""
        session = self._live(session_id)
        if value is None:
            session.metadata.pop(key, None)
        else:
            session.metadata[key] = value
        self._emit(session, "metadata", session.state)
        return session.model_copy(deep=True)

    def set_config(self, session_id: str, config: SessionConfig) -> Session:
        """Replace the session's limits (``/session limits``); the worker pool reads them
        when the session's next job asks."""
        session = self._live(session_id)
        session.config = config.model_copy(deep=True)
        self._emit(session, "metadata", session.state)
        return session.model_copy(deep=True)

    def set_workspace(
        self, session_id: str, workspace: str, branch: str | None, base: str | None
    ) -> Session:
        """Move the session into ``workspace`` (its own git worktree) on ``branch`` made
        from ``base``; its agents work there from their next step."""
        session = self._live(session_id)
        session.workspace, session.branch_name, session.base_branch = workspace, branch, base
        self._emit(session, "metadata", session.state)
        return session.model_copy(deep=True)

    def set_phase(
        self, session_id: str, phase: SessionPhase, reason: str, *, approval: str | None = None
    ) -> Session:
        """Move the session's phase along a legal transition (``phases.PHASE_TRANSITIONS``).

        ``reason`` says why (kept in the phase log); ``approval`` names the user's
        approval of the plan, which entering execution requires. Asking for the phase
        the session is already in changes nothing, so a caller resumed after a restart
        may repeat its last move. A finished or closed session's phase is final.
        """
        session = self._live(session_id)
        if session.phase is phase:
            return session.model_copy(deep=True)
        why = one_line(reason, REASON_MAX)
        if not why:
            raise PhaseRequestError("a phase change needs a reason", help_hint="say why it moves")
        if session.closed_at is not None or session.is_terminal:
            final = "closed" if session.closed_at else session.state.value
            raise PhaseTransitionError(
                session.id, session.phase, phase, why=f"the session is {final}", allowed=[]
            )
        approved = one_line(approval, APPROVAL_MAX) if approval else None
        check_move(session.id, session.phase, phase, approved)
        change = PhaseChange(
            session_id=session.id, old=session.phase, new=phase, reason=why, approval=approved
        )
        session.phase = phase
        session.last_active_at = change.at
        self._emit(session, "phase", session.state, change)
        return session.model_copy(deep=True)

    def touch(self, session_id: str, at: datetime | None = None) -> None:
        """Record activity (a message) without changing state."""
        session = self._live(session_id)
        session.last_active_at = max(session.last_active_at, at or utc_now())

    # -- preservation --------------------------------------------------------
    def snapshot(self, session_id: str, *, transcript_count: int = 0) -> SessionSnapshot:
        return SessionSnapshot(
            session=self._live(session_id).model_copy(deep=True),
            transcript_count=transcript_count,
        )

    def restore(self, snapshot: SessionSnapshot) -> Session:
        """Bring back a session's context, config, metadata and phase from a snapshot.

        An existing session keeps its lifecycle state (state only moves through
        the legal transitions); a session unknown here comes back suspended. The
        phase comes back as it was, whatever the transition table says: a restore
        undoes moves, and the phase log records it as one move of its own.
        """
        saved = snapshot.session.model_copy(deep=True)
        current = self._sessions.get(saved.id)
        if current is None:
            if saved.state is SessionState.ACTIVE:
                saved.state = SessionState.SUSPENDED
                saved.suspended_at = utc_now()
            saved.closed_at = None
            self._sessions[saved.id] = saved
            self._emit(saved, "restore", None)
            return saved.model_copy(deep=True)
        current.context = saved.context
        current.config = saved.config
        current.metadata = saved.metadata
        current.last_active_at = utc_now()
        moved = None
        if current.phase is not saved.phase and not current.is_terminal:
            reason = f"restored from snapshot {snapshot.id[:8]}"
            moved = PhaseChange(
                session_id=current.id, old=current.phase, new=saved.phase, reason=reason
            )
            current.phase = saved.phase
        self._emit(current, "restore", current.state, moved)
        return current.model_copy(deep=True)

    def stats(self) -> dict[str, int]:
        counts = {state.value: 0 for state in SessionState}
        for session in self._sessions.values():
            if session.closed_at is None:
                counts[session.state.value] += 1
        counts["closed"] = sum(1 for s in self._sessions.values() if s.closed_at)
        return counts
