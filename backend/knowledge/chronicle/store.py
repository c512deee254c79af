"""The chronicle's SQL: entries, file records and the two full-text indexes.

Plain functions over a :class:`sqlalchemy.Connection`, so the chronicle can run
them in the archive's writer transaction or on a read connection, on SQLite or
PostgreSQL (:mod:`backend.archive.dialects`). Text search is each database's own:
FTS5 ranked by BM25 on SQLite; the ``search`` tsvector column, ranked by
``ts_rank``, on PostgreSQL. Everything else is newest first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from backend.archive.dialects import driver_sql, is_postgres, json_text
from backend.knowledge.chronicle.models import (
    ALL_TIME,
    Category,
    ChronicleQuery,
    Entry,
    FileOp,
    TimeRange,
    TranscriptHit,
    iso,
)
from backend.knowledge.chronicle.text import tsquery

_ENTRY_COLUMNS = (
    "e.seq, e.id, e.session_id, e.category, e.title, e.content, e.agent, e.data, "
    "e.created_at, e.promoted, e.promoted_at, e.promoted_reason, s.name"
)
_INSERT_ENTRY = (
    "INSERT INTO chronicle_entries (id, session_id, category, title, content, agent, data, "
    "pattern_key, created_at, promoted, promoted_at, promoted_reason) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_FILE = (
    "INSERT INTO chronicle_files (session_id, path, operation, summary, changes, agent, at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


# ts_headline's options for a snippet like FTS5's snippet(…, '**', '**', '…', 24).
_HEADLINE = "StartSel=**, StopSel=**, MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…"


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _entry(row: Sequence[Any]) -> Entry:
    return Entry(
        id=row[1],
        session_id=row[2],
        category=Category(row[3]),
        title=row[4],
        content=row[5],
        agent=row[6],
        data=json.loads(row[7] or "{}"),
        created_at=datetime.fromisoformat(row[8]),
        promoted=bool(row[9]),
        promoted_at=_time(row[10]),
        promoted_reason=row[11],
        session_name=row[12],
    )


# -- entries ----------------------------------------------------------------------------
def insert_entry(conn: Connection, entry: Entry, pattern_key: str | None = None) -> None:
    driver_sql(
        conn,
        _INSERT_ENTRY,
        (
            entry.id,
            entry.session_id,
            entry.category.value,
            entry.title,
            entry.content,
            entry.agent,
            json.dumps(entry.data, sort_keys=True, default=str),
            pattern_key,
            iso(entry.created_at),
            bool(entry.promoted),
            iso(entry.promoted_at) if entry.promoted_at else None,
            entry.promoted_reason,
        ),
    )


def get_entry(conn: Connection, entry_id: str) -> Entry | None:
    row = driver_sql(
        conn,
        f"SELECT {_ENTRY_COLUMNS} FROM chronicle_entries e "
        "LEFT JOIN sessions s ON s.id = e.session_id WHERE e.id = ?",
        (entry_id,),
    ).fetchone()
    return _entry(row) if row else None


def promote(conn: Connection, entry_id: str, *, reason: str, at: datetime) -> bool:
    """Mark one entry global; False when it already was (the first reason is kept)."""
    done = driver_sql(
        conn,
        "UPDATE chronicle_entries SET promoted = TRUE, promoted_at = ?, promoted_reason = ? "
        "WHERE id = ? AND NOT promoted",
        (iso(at), reason, entry_id),
    )
    return bool(done.rowcount)


def promote_categories(
    conn: Connection, session_id: str, categories: Sequence[Category], *, reason: str, at: datetime
) -> list[str]:
    marks = ", ".join("?" for _ in categories)
    where = f"session_id = ? AND NOT promoted AND category IN ({marks})"
    args = (session_id, *(c.value for c in categories))
    ids = [r[0] for r in driver_sql(conn, f"SELECT id FROM chronicle_entries WHERE {where}", args)]
    if ids:
        driver_sql(
            conn,
            f"UPDATE chronicle_entries SET promoted = TRUE, promoted_at = ?, promoted_reason = ? "
            f"WHERE {where}",
            (iso(at), reason, *args),
        )
    return ids


def pattern_uses(conn: Connection, key: str) -> tuple[int, int, bool]:
    """(records, distinct sessions, any promoted) of the pattern with ``key``."""
    row = driver_sql(
        conn,
        "SELECT count(*), count(DISTINCT session_id), "
        "coalesce(max(CASE WHEN promoted THEN 1 ELSE 0 END), 0) "
        "FROM chronicle_entries WHERE pattern_key = ?",
        (key,),
    ).one()
    return int(row[0]), int(row[1]), bool(row[2])


def _time_where(column: str, time: TimeRange, where: list[str], args: list[Any]) -> None:
    if time.since is not None:
        where.append(f"{column} >= ?")
        args.append(iso(time.since))
    if time.until is not None:
        where.append(f"{column} < ?")
        args.append(iso(time.until))


def _in(
    column: str, values: Sequence[str], where: list[str], args: list[Any], *, neg: bool
) -> None:
    if values:
        marks = ", ".join("?" for _ in values)
        where.append(f"{column} {'NOT IN' if neg else 'IN'} ({marks})")
        args.extend(values)


def select_entries(
    conn: Connection, query: ChronicleQuery, session_id: str, match: str | None
) -> list[Entry]:
    """Entries ``session_id`` may see that satisfy ``query``; ``match`` is an FTS5 query."""
    where: list[str] = []
    args: list[Any] = []
    if query.current_only:
        where.append("e.session_id = ?")
        args.append(session_id)
    elif not query.cross_session:
        where.append("(e.session_id = ? OR e.promoted)")
        args.append(session_id)
    if query.promoted_only:
        where.append("e.promoted")
    if query.reader_user is not None:  # before the LIMIT: a teammate's never takes a place
        where.append("(e.promoted OR s.owner_user IS NULL OR s.owner_user = ?)")
        args.append(query.reader_user)
    _in("e.category", [str(c) for c in query.categories], where, args, neg=False)
    _in("e.session_id", list(query.session_ids), where, args, neg=False)
    _in("e.session_id", list(query.exclude_sessions), where, args, neg=True)
    _time_where("e.created_at", query.time, where, args)
    source = "chronicle_entries e"
    order = "e.created_at DESC, e.seq DESC"
    if match is not None and is_postgres(conn):
        where.insert(0, "e.search @@ to_tsquery('english', ?)")
        args.insert(0, tsquery(match))
        order = "ts_rank(e.search, to_tsquery('english', ?)) DESC, e.created_at DESC"
        args.append(tsquery(match))
    elif match is not None:
        source = "chronicle_fts f JOIN chronicle_entries e ON e.seq = f.rowid"
        where.insert(0, "chronicle_fts MATCH ?")
        args.insert(0, match)
        order = "bm25(chronicle_fts), e.created_at DESC"
    sql = (
        f"SELECT {_ENTRY_COLUMNS} FROM {source} LEFT JOIN sessions s ON s.id = e.session_id"
        f"{' WHERE ' + ' AND '.join(where) if where else ''} ORDER BY {order} LIMIT ?"
    )
    return [_entry(r) for r in driver_sql(conn, sql, (*args, query.limit))]


def category_counts(conn: Connection, session_id: str) -> dict[str, int]:
    rows = driver_sql(
        conn,
        "SELECT category, count(*) FROM chronicle_entries WHERE session_id = ? GROUP BY category",
        (session_id,),
    )
    return {str(c): int(n) for c, n in rows}


# -- files ------------------------------------------------------------------------------
def insert_file(conn: Connection, op: FileOp) -> None:
    driver_sql(
        conn,
        _INSERT_FILE,
        (
            op.session_id,
            op.path,
            op.operation,
            op.summary,
            json.dumps(list(op.changes)),
            op.agent,
            iso(op.at),
        ),
    )


def select_files(
    conn: Connection,
    session_ids: Sequence[str],
    time: TimeRange = ALL_TIME,
    *,
    path_terms: Sequence[str] = (),
    limit: int = 50,
) -> list[FileOp]:
    """File records, newest first; an empty ``session_ids`` means every session."""
    where: list[str] = []
    args: list[Any] = []
    _in("f.session_id", list(session_ids), where, args, neg=False)
    _time_where("f.at", time, where, args)
    if path_terms:
        like = " OR ".join(
            "lower(f.path || ' ' || coalesce(f.summary, '')) LIKE ?" for _ in path_terms
        )
        where.append(f"({like})")
        args.extend(f"%{t}%" for t in path_terms)
    sql = (
        "SELECT f.session_id, f.path, f.operation, f.summary, f.changes, f.agent, f.at, s.name "
        "FROM chronicle_files f LEFT JOIN sessions s ON s.id = f.session_id"
        f"{' WHERE ' + ' AND '.join(where) if where else ''} ORDER BY f.at DESC, f.seq DESC LIMIT ?"
    )
    return [
        FileOp(
            session_id=r[0],
            path=r[1],
            operation=r[2],
            summary=r[3],
            changes=tuple(json.loads(r[4] or "[]")),
            agent=r[5],
            at=datetime.fromisoformat(r[6]),
            session_name=r[7],
        )
        for r in driver_sql(conn, sql, (*args, limit))
    ]


# -- the conversation -------------------------------------------------------------------
def search_transcript(
    conn: Connection,
    match: str | None,
    *,
    session_ids: Sequence[str] = (),
    time: TimeRange = ALL_TIME,
    exclude_text: str | None = None,
    limit: int = 10,
) -> list[TranscriptHit]:
    """Past messages matching ``match`` (or, without it, the newest), best first.

    Answers the Archivalist already gave from its store are left out, so asking
    twice never finds the first answer instead of what was discussed.
    """
    answered_from = json_text(conn, "t.envelope", "payload", "answered_from")
    where = [f"coalesce({answered_from}, '') != 'knowledge'"]
    args: list[Any] = []
    _in("t.session_id", list(session_ids), where, args, neg=False)
    _time_where("t.timestamp", time, where, args)
    if exclude_text:
        where.append("t.text != ?")
        args.append(exclude_text)
    if match is not None and is_postgres(conn):
        query = tsquery(match)
        source = "transcript t"
        snippet = f"ts_headline('english', t.text, to_tsquery('english', ?), '{_HEADLINE}')"
        where.insert(0, "t.search @@ to_tsquery('english', ?)")
        args = [query, query, *args]  # the headline's, then the WHERE's
        order = "ts_rank(t.search, to_tsquery('english', ?)) DESC, t.seq DESC"
        args.append(query)
    elif match is not None:
        source = "transcript_fts f JOIN transcript t ON t.seq = f.rowid"
        snippet = "snippet(transcript_fts, 0, '**', '**', '…', 24)"
        where.insert(0, "transcript_fts MATCH ?")
        args.insert(0, match)
        order = "bm25(transcript_fts), t.seq DESC"
    else:
        source, snippet, order = "transcript t", "t.text", "t.seq DESC"
    sql = (
        f"SELECT t.seq, t.session_id, t.source, t.type, t.timestamp, t.text, {snippet}, s.name "
        f"FROM {source} LEFT JOIN sessions s ON s.id = t.session_id "
        f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?"
    )
    return [
        TranscriptHit(
            seq=int(r[0]),
            session_id=r[1],
            source=r[2],
            type=r[3],
            timestamp=datetime.fromisoformat(r[4]),
            text=r[5],
            snippet=r[6],
            session_name=r[7],
        )
        for r in driver_sql(conn, sql, (*args, limit))
    ]


def latest_active_session(conn: Connection, exclude: str) -> str | None:
    """The other session whose chronicle or conversation moved last."""
    row = driver_sql(
        conn,
        "SELECT session_id, max(at) AS last FROM ("
        " SELECT session_id, created_at AS at FROM chronicle_entries"
        " UNION ALL SELECT session_id, at FROM chronicle_files"
        " UNION ALL SELECT session_id, timestamp AS at FROM transcript"
        ") AS moved WHERE session_id != ? GROUP BY session_id ORDER BY last DESC LIMIT 1",
        (exclude,),
    ).fetchone()
    return str(row[0]) if row else None


def session_names(conn: Connection, ids: Sequence[str]) -> dict[str, str]:
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = driver_sql(conn, f"SELECT id, name FROM sessions WHERE id IN ({marks})", tuple(ids))
    return {str(i): str(n) for i, n in rows}
