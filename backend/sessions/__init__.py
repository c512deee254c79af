"""Sessions: the unit of isolation."""

from backend.sessions.manager import SessionManager
from backend.sessions.models import (
    Session,
    SessionConfig,
    SessionContext,
    SessionSnapshot,
    SessionState,
)

__all__ = [
    "Session",
    "SessionConfig",
    "SessionContext",
    "SessionManager",
    "SessionSnapshot",
    "SessionState",
]
