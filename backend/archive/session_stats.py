"""A session's figures from the archive: one query per table (transcript, steps, usage).

``session_stats`` adds what the session itself holds (files changed, its DAGs'
outcomes, a failure's reason) and returns a :class:`~backend.sessions.stats.SessionStats`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, case, distinct, func, select

from backend.archive.schema import STEPS, TRANSCRIPT, USAGE
from backend.archive.store import Archive
from backend.sessions.models import Session
from backend.sessions.stats import SessionStats, active_seconds


class _Read(NamedTuple):
    times: list[Any]
    steps: tuple[Any, ...]  # turns, tool calls
    usage: tuple[Any, ...]  # input tokens, output tokens, cost (None: none priced)


def _read(conn: Connection, session_id: str) -> _Read:
    t, s, u = TRANSCRIPT.c, STEPS.c, USAGE.c
    times = [r[0] for r in conn.execute(select(t.timestamp).where(t.session_id == session_id))]
    steps = conn.execute(
        select(
            func.count(distinct(s.turn_id)),
            func.coalesce(func.sum(case((s.kind == "tool_call", 1), else_=0)), 0),
        ).where(s.session_id == session_id)
    ).one()
    usage = conn.execute(
        select(
            func.coalesce(func.sum(u.input_tokens), 0),
            func.coalesce(func.sum(u.output_tokens), 0),
            func.sum(u.cost_usd),
        ).where(u.session_id == session_id)
    ).one()
    return _Read(times, tuple(steps), tuple(usage))


def _moments(values: list[Any]) -> list[datetime]:
    found = []
    for value in values:
        try:
            found.append(datetime.fromisoformat(str(value)))
        except ValueError:
            continue  # a row written by hand: it does not count towards active time
    return found


async def session_stats(archive: Archive, session: Session) -> SessionStats:
    read = await archive.aread(lambda conn: _read(conn, session.id))
    times = _moments(read.times)
    turns, tool_calls = read.steps
    tokens_in, tokens_out, cost = read.usage
    context = session.context
    files = {*context.modified_files, *context.created_files}
    outcomes: dict[str, int] = {}
    dags = session.metadata.get("dags")
    for entry in dags.values() if isinstance(dags, dict) else ():
        if isinstance(entry, dict):
            status = str(entry.get("status", "unknown"))
            outcomes[status] = outcomes.get(status, 0) + 1
    failure = session.metadata.get("failure")
    return SessionStats(
        session_id=session.id,
        name=session.name,
        state="closed" if session.closed_at else session.state.value,
        turns=int(turns),
        messages=len(times),
        input_tokens=int(tokens_in),
        output_tokens=int(tokens_out),
        cost_usd=float(cost) if cost is not None else None,
        tool_calls=int(tool_calls),
        files_changed=len(files),
        dags=outcomes,
        active_s=active_seconds(times),
        failure=str(failure) if failure else None,
    )
