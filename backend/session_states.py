"""A session's lifecycle state and its phase, as plain enums.

A leaf with no pydantic, so the TUI can compare states and phases before its first
frame without loading the session model. ``backend.sessions.models`` (the state
machine's moves) and ``backend.sessions.phases`` (the phase's moves) re-export them.
"""

from __future__ import annotations

from enum import StrEnum


class SessionState(StrEnum):
    CREATED = "created"
    ACTIVE = "active"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"


class SessionPhase(StrEnum):
    IDLE = "idle"
    RESEARCH = "research"
    PLANNING = "planning"
    EXECUTION = "execution"
    INSPECTION = "inspection"
    TESTING = "testing"
    COMPLETE = "complete"
