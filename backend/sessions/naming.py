"""What a session may be called: one line, 1-120 characters, unique among all sessions.

Names are how people (and `/session switch NAME`) find a session again, so a rename
that would make two sessions answer to one name, or smuggle a newline or a control
character into every list that shows it, is refused with a typed error.
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.errors import ErrorKind, SylkError

NAME_MAX = 120
"""The longest name (the archive's column and the session model allow no more)."""


class SessionNameError(SylkError):
    """A session name was empty, too long, not one line, or already taken."""

    error_kind = ErrorKind.INVALID


def checked_name(name: str, taken: Iterable[str]) -> str:
    """``name`` stripped, or a :class:`SessionNameError` saying why it cannot be used.

    ``taken`` are the other sessions' names (compared without case, as lookups are).
    """
    cleaned = name.strip()
    if not cleaned:
        raise SessionNameError("a session name cannot be empty", help_hint="type a name")
    if any(not ch.isprintable() for ch in cleaned):
        raise SessionNameError(
            "a session name must be one line of printable text",
            help_hint="no newlines, tabs or control characters",
        )
    if len(cleaned) > NAME_MAX:
        raise SessionNameError(
            f"a session name has at most {NAME_MAX} characters (this has {len(cleaned)})",
            help_hint="shorten it",
        )
    if cleaned.casefold() in {other.casefold() for other in taken}:
        raise SessionNameError(
            f"a session is already called {cleaned!r}", help_hint="pick another name"
        )
    return cleaned


class SessionBusyError(SylkError):
    """A session cannot be deleted while an agent is answering in it."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, name: str) -> None:
        super().__init__(
            f"session {name!r} is answering; it cannot be deleted now",
            help_hint="stop the answer first (esc), then delete it",
        )
