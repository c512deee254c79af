"""The phase log: every move of a session's phase, stored with the session it moved.

The session's row holds the phase it is in (in its JSON ``data``); this log holds
how it got there (from, to, why, whose approval, when). Both are written in one
transaction, so after a crash the current phase and the log's last move agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, insert, select

from backend.archive.schema import SESSION_PHASES
from backend.archive.store import Archive
from backend.archive.writer import WriteFn
from backend.sessions.models import Session
from backend.sessions.phases import PhaseChange, SessionPhase

_phases = SESSION_PHASES


def _row(change: PhaseChange) -> dict[str, str | None]:
    return {
        "session_id": change.session_id,
        "old": change.old.value,
        "new": change.new.value,
        "reason": change.reason,
        "approval": change.approval,
        "at": change.at.isoformat(),
    }


def sessions_with_phase_moves(sessions: Iterable[Session], moves: Iterable[PhaseChange]) -> WriteFn:
    """One write storing ``sessions`` and appending ``moves`` to the log."""
    save = Archive.upsert_sessions(list(sessions))
    rows = [_row(m) for m in moves]

    def fn(conn: Connection) -> None:
        save(conn)
        if rows:
            conn.execute(insert(_phases), rows)

    return fn


def _load(conn: Connection, session_id: str) -> list[PhaseChange]:
    query = select(_phases).where(_phases.c.session_id == session_id).order_by(_phases.c.seq)
    return [
        PhaseChange(
            session_id=r.session_id,
            old=SessionPhase(r.old),
            new=SessionPhase(r.new),
            reason=r.reason,
            approval=r.approval,
            at=r.at,
        )
        for r in conn.execute(query)
    ]


async def phase_history(archive: Archive, session_id: str) -> list[PhaseChange]:
    """The session's phase moves, oldest first."""
    return await archive.aread(lambda conn: _load(conn, session_id))
