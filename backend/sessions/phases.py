"""The session's phase: where its planned work stands, and the moves between phases.

The seed's "Phase-Based User Interaction": research (optional), planning, execution,
inspection, testing, complete. A session's lifecycle state (:class:`SessionState`)
says whether it is in front, put aside or finished; its phase says what its work is
doing, and the two are independent (a suspended session may be mid-execution).

One phase is not in the seed's diagram: ``idle``, the phase of a session that has no
planned work yet (chat, questions, a quick ``@engineer`` edit). Calling such a session
"research" or "planning" would claim work that is not happening.

Only the moves in :data:`PHASE_TRANSITIONS` are legal, and entering execution always
names the user's approval of a plan (a first plan, or a fix plan after inspection or
testing found problems): the engine records who approved, it never assumes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from backend.clock import utc_now
from backend.errors import ErrorKind, SylkError
from backend.session_states import SessionPhase as SessionPhase  # noqa: PLC0414 (re-exported)

REASON_MAX = 300
APPROVAL_MAX = 120


P = SessionPhase

# The seed's flow, as (from) -> the phases it may move to, each for a reason:
PHASE_TRANSITIONS: Mapping[SessionPhase, frozenset[SessionPhase]] = MappingProxyType(
    {
        # The user asks for research, or asks for a change (the Architect plans it).
        P.IDLE: frozenset({P.RESEARCH, P.PLANNING}),
        # "I want to implement this" -> planning; or the user drops the topic.
        P.RESEARCH: frozenset({P.PLANNING, P.IDLE}),
        # The user approves the plan -> execution; or drops the plan.
        P.PLANNING: frozenset({P.EXECUTION, P.IDLE}),
        # The DAG finished -> inspection; a change request, "stop" or a failed node
        # sends the work back to the Architect.
        P.EXECUTION: frozenset({P.INSPECTION, P.PLANNING}),
        # Passed (or the findings overridden) -> testing; an approved fix plan ->
        # execution again; a change request -> planning.
        P.INSPECTION: frozenset({P.TESTING, P.EXECUTION, P.PLANNING}),
        # Passed (or tests skipped) -> complete; an approved fix plan -> execution.
        P.TESTING: frozenset({P.COMPLETE, P.EXECUTION, P.PLANNING}),
        # A new change request, or new research, in the same session.
        P.COMPLETE: frozenset({P.PLANNING, P.RESEARCH}),
    }
)

NEEDS_APPROVAL: frozenset[SessionPhase] = frozenset({P.EXECUTION})
"""Phases entered only with the user's approval of a plan."""


def next_phases(current: SessionPhase) -> list[SessionPhase]:
    """The phases ``current`` may move to: forward first, then back, nearest first."""
    order = list(SessionPhase)
    here = order.index(current)
    allowed = PHASE_TRANSITIONS[current]
    ahead = [p for p in order[here + 1 :] if p in allowed]
    behind = [p for p in reversed(order[:here]) if p in allowed]
    return ahead + behind


def describe_next(current: SessionPhase) -> str:
    """``next_phases`` as words: ``execution (with the plan's approval), idle``."""
    words = [
        f"{p.value} (with the plan's approval)" if p in NEEDS_APPROVAL else p.value
        for p in next_phases(current)
    ]
    return ", ".join(words) or "nothing"


class PhaseTransitionError(SylkError):
    """The session's phase may not move to the phase asked for (now, or without approval)."""

    error_kind = ErrorKind.CONFLICT

    def __init__(
        self,
        session_id: str,
        current: SessionPhase,
        target: SessionPhase,
        *,
        why: str | None = None,
        allowed: list[SessionPhase] | None = None,
    ) -> None:
        self.session_id = session_id
        self.current = current
        self.target = target
        self.allowed = next_phases(current) if allowed is None else allowed
        reason = f": {why}" if why else ""
        hint = (
            f"from {current.value} it can go to: {describe_next(current)}"
            if self.allowed
            else "its phase can no longer change"
        )
        super().__init__(
            f"session {session_id[:8]} cannot move from {current.value} to {target.value}{reason}",
            help_hint=hint,
            details={
                "current": current.value,
                "target": target.value,
                "allowed": [p.value for p in self.allowed],
            },
        )


class PhaseApprovalRequiredError(PhaseTransitionError):
    """Execution was asked for without naming the user's approval of the plan."""


class PhaseRequestError(SylkError):
    """A phase change asked for with an unknown phase or an empty reason."""

    error_kind = ErrorKind.INVALID


def parse_phase(value: SessionPhase | str) -> SessionPhase:
    """``value`` as a phase; any other word is a :class:`PhaseRequestError` listing them."""
    if isinstance(value, SessionPhase):
        return value
    try:
        return SessionPhase(str(value).strip().casefold())
    except ValueError:
        names = ", ".join(p.value for p in SessionPhase)
        raise PhaseRequestError(
            f"unknown phase {str(value)[:40]!r}", help_hint=f"the phases are: {names}"
        ) from None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str, limit: int) -> str:
    """``text`` on one line of at most ``limit`` characters, control characters as spaces:
    a reason may come from a model, and it is shown in the terminal and stored."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def check_move(
    session_id: str, current: SessionPhase, target: SessionPhase, approval: str | None
) -> None:
    """Raise unless ``current -> target`` is legal (a move to the same phase is not one)."""
    if target not in PHASE_TRANSITIONS[current]:
        raise PhaseTransitionError(session_id, current, target)
    if target in NEEDS_APPROVAL and not approval:
        raise PhaseApprovalRequiredError(
            session_id, current, target, why="it needs the user's approval of a plan"
        )


class PhaseChange(BaseModel):
    """One move of a session's phase, as the archive's phase log keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    old: SessionPhase
    new: SessionPhase
    reason: str = Field(min_length=1, max_length=REASON_MAX)
    approval: str | None = Field(default=None, max_length=APPROVAL_MAX)
    at: datetime = Field(default_factory=utc_now)
