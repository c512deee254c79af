"""Who may read which session: a caller reads its own, others only with a scope.

Ops tagged ``cross_session`` may name other sessions, but only for callers that
hold ``history.cross_session`` (``sylk mcp serve --cross-session``). The same
rule decides which sessions and transcripts a client is shown.
"""

from __future__ import annotations

from typing import Any

from backend.sessions.models import Session
from backend.skills.models import SkillContext

CROSS_SESSION_TAG = "cross_session"  # ops with this tag may name other sessions ...
CROSS_SESSION_SCOPE = "history.cross_session"  # ... for callers holding this scope
TRANSCRIPT_TEMPLATE = "sylk://sessions/{session_id}/transcript"


def may_read(ctx: SkillContext | None, session_id: str) -> bool:
    """A caller reads its own session, and others only with the cross-session scope,
    and then only its own user's (``ctx.reach``): a teammate's history stays theirs."""
    if ctx is None or session_id == ctx.session_id:
        return True
    if CROSS_SESSION_SCOPE not in ctx.scopes:
        return False
    return ctx.reach is None or ctx.reach.same_user(session_id)


def transcript_uri(session_id: str) -> str:
    return TRANSCRIPT_TEMPLATE.format(session_id=session_id)


def session_summary(session: Session, messages: int) -> dict[str, Any]:
    return {
        "id": session.id,
        "name": session.name,
        "state": session.state.value,
        "phase": session.phase.value,
        "workspace": session.workspace,
        "created_at": session.created_at.isoformat(),
        "last_active_at": session.last_active_at.isoformat(),
        "messages": messages,
        "transcript": transcript_uri(session.id),
    }
