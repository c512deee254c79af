"""What a routing decision is. Every tier (DSL, cache, pattern, model) produces one."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.roles import AGENT_ROLES


class Target(StrEnum):
    """Where a user request goes: an agent role (:data:`backend.roles.AGENT_ROLES`), the
    session manager or a running pipeline."""

    GUIDE = "guide"  # /help, /status: the Guide answers itself
    SESSION_MANAGER = "session_manager"
    ACADEMIC = "academic"
    ARCHITECT = "architect"
    ARCHIVALIST = "archivalist"
    ENGINEER = "engineer"
    INSPECTOR = "inspector"
    LIBRARIAN = "librarian"
    ORCHESTRATOR = "orchestrator"
    TESTER = "tester"
    PIPELINE = "pipeline"  # /task <id> ...: a running pipeline's engineer


# The agents a request can be sent to: every role but the Guide (which answers itself).
# Derived from the roles, so a role without a member above fails here, at import.
AGENT_TARGETS = frozenset(Target(role) for role in AGENT_ROLES) - {Target.GUIDE}


class LibrarianIntent(StrEnum):
    LOCATE = "LOCATE"
    PATTERN = "PATTERN"
    EXPLAIN = "EXPLAIN"
    GENERAL = "GENERAL"


class ArchivalistIntent(StrEnum):
    HISTORICAL = "HISTORICAL"
    ACTIVITY = "ACTIVITY"
    OUTCOME = "OUTCOME"
    SIMILAR = "SIMILAR"
    RESUME = "RESUME"
    GENERAL = "GENERAL"
    RECORD = "RECORD"  # not a question: something to keep (a decision, a note)


# "phase": a short line whose meaning depends on the session's phase (``phase_rules``).
Tier = Literal["dsl", "phase", "cache", "pattern", "model"]

# Patterns at or above this confidence decide; below it the model tier is asked.
CONFIDENT = 0.75


class Classification(BaseModel):
    """What the pattern and model tiers say about free text."""

    model_config = ConfigDict(extra="forbid")
    target: Target
    # LibrarianIntent / ArchivalistIntent value, or None for other targets.
    intent: str | None = None
    # snake_case entity or concept ("auth_middleware", "error_handling").
    subject: str | None = None
    # Archivalist only: "today", "yesterday", "last_week", "last_month", "recently", ...
    time_scope: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)


class RouteDecision(Classification):
    """A classification plus how it was reached."""

    tier: Tier
    latency_us: float = 0.0
    # For DSL routes: the command's verb and arguments, e.g. {"verb": "switch", "ref": "2"}.
    command: dict[str, str] | None = None
    # What was actually sent on (an explicit @agent strips its prefix).
    text: str = ""


def describe_route(route: dict[str, object]) -> str:
    """One line for people: target, tier, intent and subject, time scope, confidence."""
    parts = [f"→ {route.get('target')}", str(route.get("tier"))]
    intent, subject = route.get("intent"), route.get("subject")
    if intent or subject:
        parts.append(" ".join(str(p) for p in (intent, subject) if p))
    if route.get("time_scope"):
        parts.append(str(route["time_scope"]))
    confidence = route.get("confidence")
    if route.get("tier") != "dsl" and isinstance(confidence, int | float):
        parts.append(f"{confidence:.2f}")
    return " · ".join(parts)
