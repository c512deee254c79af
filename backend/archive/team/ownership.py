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

from sqlalchemy import Connection, case, select

from backend.archive.schema import SESSIONS
from backend.archive.store import Archive
from backend.sessions.models import Session
from backend.sessions.ownership import SessionOwner, owner_of, owns, same_user


@dataclass(frozen=True)
class TeamRow:
    """One session as a teammate sees it: no transcript, no workspace."""

    id: str
    name: str
    state: str
    owner: SessionOwner
    closed: bool
    last_active_at: str = ""  # ISO 8601, as the row stores it


def _owner(user: str | None, host: str | None, data: str | None) -> SessionOwner | None:
    """The owner columns; a row without them (written by a Sylk before them) its JSON's."""
    if user is not None:
        return SessionOwner(user=user, host=host or "?")
    return None if data is None else json_owner(data)


def json_owner(data: str) -> SessionOwner | None:
    """The owner in a session row's JSON (None: a row before owners existed)."""
    try:
        raw = json.loads(data).get("owner")
        return None if raw is None else SessionOwner.model_validate(raw)
    except (ValueError, AttributeError):  # an unreadable row names nobody: treated as foreign
        return SessionOwner(user="?", host="?")


def _rows(conn: Connection, reader: SessionOwner) -> list[TeamRow]:
    s = SESSIONS.c
    unowned = case((s.owner_user.is_(None), s.data), else_=None)  # only rows without columns
    query = select(
        s.id, s.name, s.state, s.closed, s.owner_user, s.owner_host, unowned, s.last_active_at
    ).order_by(s.created_at)
    return [
        TeamRow(r[0], r[1], r[2], owner_of(_owner(r[4], r[5], r[6]), reader), bool(r[3]), r[7])
        for r in conn.execute(query)
    ]


def owned_sessions(archive: Archive, reader: SessionOwner) -> list[Session]:
    """The sessions ``reader`` runs (its user and host), asked of SQL: on a shared archive
    a teammate's rows are never read whole. A row without owner columns is checked by its
    JSON (a row before owners existed is the reader's)."""
    s = SESSIONS.c
    mine = (s.owner_user == reader.user) & (s.owner_host == reader.host)
    query = select(s.data).where(mine | s.owner_user.is_(None)).order_by(s.created_at)
    rows = archive.read(lambda conn: [r[0] for r in conn.execute(query)])
    found = (Session.model_validate_json(data) for data in rows)
    return [session for session in found if owns(session.owner, reader)]


class TeamReach:
    """The engine's user's reach over a (possibly shared) archive."""

    def __init__(self, archive: Archive, reader: SessionOwner) -> None:
        self._archive = archive
        self.reader = reader
        self._owners: dict[str, SessionOwner] = {}
        self._lock = threading.Lock()

    @property
    def user(self) -> str:
        """The user whose sessions a cross-session read may reach."""
        return self.reader.user

    def team_rows(self) -> list[TeamRow]:
        """Every session in the archive, with its owner (an old row: the reader)."""
        found = self._archive.read(lambda conn: _rows(conn, self.reader))
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
