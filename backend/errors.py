"""Typed errors raised by the engine.

Every error a user can provoke is a subclass of :class:`SylkError`, carries a
short message and, where one exists, a pointer to help. The UI and CLI show the
message; they never show a traceback for these.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class ErrorKind(StrEnum):
    """What an error means to whoever caused it; the one source of envelope codes.

    INVALID and NOT_FOUND say "change the request", DENIED "you may not",
    CONFLICT "the state does not allow it now", INTERNAL "Sylk failed".
    """

    INVALID = "invalid"
    DENIED = "denied"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    INTERNAL = "internal"


class SylkError(Exception):
    """Base class for every error the engine raises on purpose.

    ``error_kind`` (a class attribute) says what the error means; ``details`` and
    ``help_path`` travel into an op's error envelope when a handler raises it.
    """

    help_hint: str = ""
    error_kind: ClassVar[ErrorKind] = ErrorKind.INTERNAL

    def __init__(
        self,
        message: str,
        *,
        help_hint: str | None = None,
        details: dict[str, Any] | None = None,
        help_path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if help_hint is not None:
            self.help_hint = help_hint
        self.details = details
        self.help_path = help_path

    def failure_word(self) -> str:
        """A stable word for the failure; an envelope carries it when no details are given."""
        return type(self).__name__

    def __str__(self) -> str:
        if self.help_hint:
            return f"{self.message} ({self.help_hint})"
        return self.message


class SessionNotFoundError(SylkError):
    """No session matches the given id, prefix, name or index."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, ref: str) -> None:
        super().__init__(
            f"no session matches {ref!r}",
            help_hint="list sessions with `/session list` or `sylk sessions list`",
        )
        self.ref = ref


class AmbiguousSessionError(SylkError):
    """A reference matches more than one session."""

    error_kind = ErrorKind.INVALID

    def __init__(self, ref: str, matches: list[str]) -> None:
        super().__init__(
            f"{ref!r} matches {len(matches)} sessions: {', '.join(matches)}",
            help_hint="use more characters of the id",
        )
        self.ref = ref
        self.matches = matches


class InvalidTransitionError(SylkError):
    """A lifecycle operation is not legal from the session's current state."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, session_id: str, current: str, operation: str, allowed: list[str]) -> None:
        hint = (
            f"from {current!r} you can: {', '.join(allowed)}"
            if allowed
            else (f"{current!r} is a final state")
        )
        super().__init__(
            f"cannot {operation} session {session_id}: it is {current}",
            help_hint=hint,
        )
        self.session_id = session_id
        self.current = current
        self.operation = operation


class ArchiveError(SylkError):
    """The archive database cannot be used."""


class ArchiveCorruptError(ArchiveError):
    """The database file exists but is not a healthy Sylk archive."""


class ArchiveVersionError(ArchiveError):
    """The database was written by a newer Sylk than this one."""


class ArchiveClosedError(ArchiveError):
    """A write was attempted after the archive was closed."""


class ArchiveUnavailableError(ArchiveError):
    """The archive's database server cannot be reached or refused the login."""

    error_kind = ErrorKind.CONFLICT


# Why the archive could not be written: what the user is told, and what to do about it.
ARCHIVE_WRITE_REASONS: dict[str, tuple[str, str]] = {
    "read_only": (
        "it is read-only (the file, its folder or the file system)",
        "make {folder} writable, or point --data-dir or SYLK_DATA_DIR at a writable folder",
    ),
    "full": (
        "the disk is full (or the database reached its size limit)",
        "free space on the disk that holds {folder}, then try again",
    ),
    "io": (
        "the disk reported an I/O error",
        "check the disk that holds {folder} (e.g. dmesg), then try again",
    ),
    "cannot_open": (
        "the database file cannot be opened for writing",
        "check that {folder} exists and is writable",
    ),
    "unavailable": (
        "the connection to the database server was lost",
        "check that the server of database_url is running and reachable, then try again",
    ),
}


class ArchiveWriteError(ArchiveError):
    """The archive could not store something: the disk is full, the database or its
    file system is read-only, or the disk failed. ``unsaved`` holds the messages that
    were not stored (so a front end can still show them); nothing of the failed write
    is in the archive."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, path: Any, reason: str, *, unsaved: tuple[Any, ...] = ()) -> None:
        what, hint = ARCHIVE_WRITE_REASONS[reason]
        folder = getattr(path, "parent", path)
        super().__init__(
            f"cannot write the archive {path}: {what}",
            help_hint=hint.format(folder=folder),
            details={"reason": f"archive_{reason}"},
        )
        self.path = path
        self.reason = reason
        self.unsaved = unsaved

    def with_unsaved(self, unsaved: tuple[Any, ...]) -> ArchiveWriteError:
        """The same error, naming what was not stored."""
        return ArchiveWriteError(self.path, self.reason, unsaved=unsaved)


class CommandError(SylkError):
    """A DSL command in the composer could not be parsed or carried out."""

    error_kind = ErrorKind.INVALID


class SessionNotActiveError(SylkError):
    """A request was sent to a session that is not in the foreground."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, session_id: str, state: str, name: str | None = None) -> None:
        hint = (
            "resume it first (/session resume, or alt+r)"
            if state in ("suspended", "created")
            else "start a new session with /session new"
        )
        shown = f"{name!r} ({session_id[:8]})" if name else session_id
        super().__init__(f"session {shown} is {state}, not active", help_hint=hint)
        self.session_id = session_id
        self.state = state
