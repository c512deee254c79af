"""The agent roles of a Sylk session."""

from __future__ import annotations

AGENT_ROLES = (
    "guide",
    "architect",
    "orchestrator",
    "engineer",
    "librarian",
    "archivalist",
    "academic",
    "inspector",
    "tester",
)
