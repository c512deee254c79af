"""Which sessions have been idle long enough to suspend: the rule, without a timer.

A session is suspended after idling when it is active, not the one a front end shows
(``shown``), busy with nothing (no turn, no question waiting, no DAG running:
``busy``), and its last activity is at least its limit ago. The limit is the session's
own ``SessionConfig.auto_suspend_after``, else the config's default; none: never.
The engine's timer (``backend.engine.lifecycle.idle_timer``) asks this with its clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from backend.sessions.models import Session, SessionState


def idle_limit(session: Session, default: timedelta | None) -> timedelta | None:
    return session.config.auto_suspend_after or default


def idle_sessions(
    sessions: Iterable[Session],
    now: datetime,
    *,
    default: timedelta | None,
    busy: Callable[[str], bool],
    shown: str | None = None,
) -> list[str]:
    """The ids of the sessions to suspend now."""
    due: list[str] = []
    for session in sessions:
        limit = idle_limit(session, default)
        if limit is None or session.state is not SessionState.ACTIVE or session.id == shown:
            continue
        idle = session.closed_at is None and now - session.last_active_at >= limit
        if idle and not busy(session.id):
            due.append(session.id)
    return due
