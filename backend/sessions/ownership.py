"""Who a session belongs to: the user and the host that created it.

On a shared archive (a team's PostgreSQL) one table holds every teammate's
sessions. An engine loads and runs only the sessions it owns (user and host: a
session's worktree and processes live on the machine that made it), and
cross-session reads stop at the user (:func:`same_user`). A row written before
owners existed carries none: it reads as the reader's own, which is true of
every archive that was never shared.
"""

from __future__ import annotations

import getpass
import socket
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field


class SessionOwner(BaseModel):
    """The user a session acts for and the machine it runs on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(min_length=1, max_length=200)
    host: str = Field(min_length=1, max_length=255)

    def __str__(self) -> str:
        return f"{self.user}@{self.host}"


def local_owner(user: str | None = None) -> SessionOwner:
    """This process's identity: ``user`` (``[team] user``) or the OS user, and this host."""
    try:
        os_user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        os_user = "unknown"
    return SessionOwner(user=user or os_user, host=socket.gethostname() or "localhost")


def owner_of(owner: SessionOwner | None, reader: SessionOwner) -> SessionOwner:
    """A stored owner, or ``reader`` for a row written before owners existed."""
    return reader if owner is None else owner


def owns(owner: SessionOwner | None, reader: SessionOwner) -> bool:
    """``reader`` runs this session: same user and same host."""
    return owner_of(owner, reader) == reader


def same_user(owner: SessionOwner | None, reader: SessionOwner) -> bool:
    """``reader`` may read this session's history with the cross-session scope."""
    return owner_of(owner, reader).user == reader.user


class SessionReach(Protocol):
    """Which sessions a caller may read beyond its own (with the cross-session scope)."""

    @property
    def user(self) -> str:
        """The user whose sessions these are: a query filters on it in SQL, before its limit."""
        ...

    def same_user(self, ref: str) -> bool:
        """Every session whose id starts with ``ref`` belongs to the caller's user."""
        ...
