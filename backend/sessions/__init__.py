"""Sessions: the unit of isolation."""

from backend.sessions.manager import SessionManager
from backend.sessions.models import (
    Session,
    SessionConfig,
    SessionContext,
    SessionSnapshot,
    SessionState,
)
from backend.sessions.phases import PhaseChange, SessionPhase

__all__ = [
    "PhaseChange",
    "Session",
    "SessionConfig",
    "SessionContext",
    "SessionManager",
    "SessionPhase",
    "SessionSnapshot",
    "SessionState",
]
