"""Sessions by owner, read from the archive: the team's view and the privacy line.

On a shared archive a caller with the cross-session scope reads other sessions
of *its own user* only (:class:`TeamReach`, a
:class:`~backend.sessions.ownership.SessionReach`); another user's transcripts and
unpromoted chronicle entries stay theirs. Owners never change, so each session's
owner is read once and kept; an id not seen yet reads the sessions table again.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from sqlalchemy import Connection, select

from backend.archive.schema import SESSIONS
from backend.archive.store import Archive
from backend.sessions.ownership import SessionOwner, owner_of, same_user


@dataclass(frozen=True)
class TeamRow:
    """One session as a teammate sees it: no transcript, no workspace."""

    id: str
    name: str
    state: str
    owner: SessionOwner
    closed: bool


def _owner(data: str) -> SessionOwner | None:
    try:
        raw = json.loads(data).get("owner")
        return None if raw is None else SessionOwner.model_validate(raw)
    except (ValueError, AttributeError):  # an unreadable row names nobody: treated as foreign
        return SessionOwner(user="?", host="?")


def _rows(conn: Connection) -> list[tuple[str, str, str, bool, str]]:
    s = SESSIONS.c
    query = select(s.id, s.name, s.state, s.closed, s.data).order_by(s.created_at)
    return [(r[0], r[1], r[2], bool(r[3]), r[4]) for r in conn.execute(query)]


class TeamReach:
    """The engine's user's reach over a (possibly shared) archive."""

    def __init__(self, archive: Archive, reader: SessionOwner) -> None:
        self._archive = archive
        self.reader = reader
        self._owners: dict[str, SessionOwner] = {}
        self._lock = threading.Lock()

    def team_rows(self) -> list[TeamRow]:
        """Every session in the archive, with its owner (an old row: the reader)."""
        rows = self._archive.read(_rows)
        found = [
            TeamRow(sid, name, state, owner_of(_owner(data), self.reader), closed)
            for sid, name, state, closed, data in rows
        ]
        with self._lock:
            self._owners.update({r.id: r.owner for r in found})
        return found

    def _known(self, ref: str) -> list[SessionOwner]:
        with self._lock:
            return [o for sid, o in self._owners.items() if sid.startswith(ref)]

    def same_user(self, ref: str) -> bool:
        if not ref:
            return False
        owners = self._known(ref)
        if not owners:
            self.team_rows()
            owners = self._known(ref)
        return all(same_user(o, self.reader) for o in owners)

    def user_sessions(self) -> tuple[str, ...]:
        """The ids of every session of the reader's user, on any host."""
        return tuple(r.id for r in self.team_rows() if r.owner.user == self.reader.user)
