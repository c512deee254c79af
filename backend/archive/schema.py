"""Archive tables and the check that a database file is safe to open.

The probe opens the file read-only before anything writes to it, so a corrupt
file, a foreign database or one written by a newer Sylk is reported and left
exactly as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Boolean, Column, Connection, Float, Index, Integer, MetaData, String, Table

from backend.errors import ArchiveCorruptError, ArchiveVersionError

# 1: the first archive. 2: sessions carry their phase (in ``data``; a row of 1 reads
# as idle) and ``session_phases`` logs its moves. A file is migrated on open
# (``migration``); a Sylk that reads only 1 refuses a 2 instead of misreading it.
SCHEMA_VERSION = 2
# PRAGMA application_id marks the file as a Sylk archive ("SYLK" in ASCII).
APPLICATION_ID = 0x53594C4B


METADATA = MetaData()
"""Every archive table. Declared with SQLAlchemy Core: the archive reads and writes rows
with Core statements only, and Core alone imports in a fraction of what the ORM (which
SQLModel's table classes need) takes at every ``sylk run`` and ``sylk mcp serve``."""


def _text(name: str, *, nullable: bool = False, **kw: Any) -> Column[str]:
    return Column(name, String(), nullable=nullable, **kw)


def _int(name: str, *, nullable: bool = False, **kw: Any) -> Column[int]:
    return Column(name, Integer(), nullable=nullable, **kw)


def _flag(name: str, **kw: Any) -> Column[bool]:
    return Column(name, Boolean(), nullable=False, default=False, **kw)


def _seq() -> Column[int]:
    return Column("seq", Integer(), primary_key=True)


SCHEMA_META = Table("schema_meta", METADATA, _text("key", primary_key=True), _text("value"))

SESSIONS = Table(
    "sessions",
    METADATA,
    _text("id", primary_key=True),
    _text("name"),
    _text("state", index=True),
    _text("created_at"),
    _text("last_active_at"),
    _flag("closed"),
    _text("data"),
    # The owner (``data``'s ``owner``) as columns, so a team's reads filter in SQL; NULL:
    # a row written before owners existed, which reads as the reader's.
    _text("owner_user", nullable=True, index=True),
    _text("owner_host", nullable=True),
)

TRANSCRIPT = Table(
    "transcript",
    METADATA,
    _seq(),
    _text("id", unique=True),
    _text("session_id"),
    _text("type"),
    _text("source"),
    _text("timestamp"),
    _text("text"),
    _text("envelope"),
    Index("ix_transcript_session_seq", "session_id", "seq"),
)

SNAPSHOTS = Table(
    "snapshots",
    METADATA,
    _text("id", primary_key=True),
    _text("session_id", index=True),
    _text("created_at"),
    _text("label", nullable=True),
    _text("data"),
)

STEPS = Table(
    "agent_steps",
    METADATA,
    _seq(),
    _text("session_id"),
    _text("turn_id", index=True),
    _text("role"),
    _int("step"),
    _text("kind"),
    _text("at"),
    _text("data"),
    Index("ix_steps_session_seq", "session_id", "seq"),
)
"""One step of an agent turn (model call, tool call, result, final, error)."""

USAGE = Table(
    "usage",
    METADATA,
    _seq(),
    _text("session_id"),
    _text("turn_id"),
    _text("agent"),
    _text("provider"),
    _text("model"),
    _int("input_tokens"),
    _int("output_tokens"),
    _int("cache_read_tokens"),
    _int("cache_write_tokens"),
    Column("cost_usd", Float(), nullable=True),
    _text("at"),
    # Counted locally because the server sent no usage. Added without a version bump
    # (``migration.ADDED_COLUMNS``): the default lets an older Sylk still insert rows.
    _flag("estimated", server_default="0"),
    # The pipeline (a plan task, ``plan/node``) the call worked for; None: none. Added
    # the same way (budgets limit a pipeline's spend).
    _text("pipeline_id", nullable=True),
    Index("ix_usage_session_agent", "session_id", "agent"),
)
"""Tokens and cost of one model call."""

PREFERENCES = Table(
    "preferences",
    METADATA,
    _text("key", primary_key=True),
    _text("value"),  # JSON
    _text("updated_at"),
)
"""A global user preference (e.g. a tool the user chose), shared by every session."""

SESSION_PHASES = Table(
    "session_phases",
    METADATA,
    _seq(),
    _text("session_id"),
    _text("old"),
    _text("new"),
    _text("reason"),
    _text("approval", nullable=True),
    _text("at"),
    Index("ix_session_phases_session_seq", "session_id", "seq"),
)
"""One move of a session's phase (``backend.sessions.phases.PhaseChange``); the
session's row holds the phase it is in, this log how and why it got there."""

PLANS = Table(
    "plans",
    METADATA,
    _seq(),
    _text("session_id"),
    _text("plan_id"),
    _int("version"),
    _text("status"),
    _int("supersedes", nullable=True),  # the version this one replaced
    _text("source"),  # who submitted it: an agent, or "mcp"
    _text("feedback", default=""),  # the user's words that led to this version
    _text("document"),  # JSON, with execution_order filled in
    _text("created_at"),
    _text("updated_at"),
    _text("decided_by", nullable=True),
    Index("ux_plans_session_plan_version", "session_id", "plan_id", "version", unique=True),
)
"""One version of a plan the Architect (or a client) proposed in a session, with
its status; a modification is a new version that supersedes the one before.
Added without a version bump: an older Sylk of schema 2 leaves the table alone."""

CHRONICLE_ENTRIES = Table(
    "chronicle_entries",
    METADATA,
    _seq(),
    _text("id", unique=True),
    _text("session_id"),
    _text("category", index=True),
    _text("title", nullable=True),
    _text("content"),
    _text("agent", nullable=True),
    _text("data", default="{}"),  # JSON
    _text("pattern_key", nullable=True),  # patterns: normalised category/name, for promotion
    _text("created_at", index=True),
    _flag("promoted"),
    _text("promoted_at", nullable=True),
    _text("promoted_reason", nullable=True),
    Index("ix_chronicle_session_time", "session_id", "created_at"),
    Index("ix_chronicle_pattern_key", "pattern_key"),
)
"""One entry of the Archivalist's chronicle ("what was done"), written by one session.

``seq`` is the rowid the full-text index points at; ``promoted`` entries are
readable from every session, the others only from the session that wrote them.
"""

CHRONICLE_FILES = Table(
    "chronicle_files",
    METADATA,
    _seq(),
    _text("session_id"),
    _text("path"),
    _text("operation"),
    _text("summary", nullable=True),
    _text("changes", default="[]"),  # JSON list of strings
    _text("agent", nullable=True),
    _text("at"),
    Index("ix_chronicle_files_session_at", "session_id", "at"),
)
"""A file a session read, modified or created, as the chronicle records it."""

TABLES = [
    SCHEMA_META,
    SESSIONS,
    TRANSCRIPT,
    SNAPSHOTS,
    STEPS,
    USAGE,
    PREFERENCES,
    CHRONICLE_ENTRIES,
    CHRONICLE_FILES,
    SESSION_PHASES,
    PLANS,
]

SESSION_OWNED = [TRANSCRIPT, SNAPSHOTS, CHRONICLE_FILES, SESSION_PHASES, PLANS]
"""Tables whose rows belong to one session (``session_id``) and go when it is deleted;
the chronicle's entries are not among them (promoted ones outlive their session)."""

# Full-text indexes over the chronicle and the conversation. External-content
# FTS5 tables store only the index; triggers keep them in step with their rows.
_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"


def _fts_ddl(fts: str, table: str, columns: tuple[str, ...]) -> list[str]:
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    delete = f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.seq, {old});"
    insert = f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.seq, {new});"
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({cols}, content='{table}', "
        f"content_rowid='seq', {_TOKENIZE})",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON {table} BEGIN {insert} END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON {table} BEGIN {delete} END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE ON {table} "
        f"BEGIN {delete} {insert} END",
    ]


FTS_TABLES: dict[str, list[str]] = {
    "chronicle_fts": _fts_ddl("chronicle_fts", "chronicle_entries", ("title", "content")),
    "transcript_fts": _fts_ddl("transcript_fts", "transcript", ("text",)),
}


def ensure_fts(conn: Connection) -> list[str]:
    """Create the full-text indexes that are missing; back-fill each new one.

    An archive written before an index existed already holds rows (a transcript
    of earlier sessions): ``rebuild`` indexes them, so old conversations are
    searchable from the first open. Returns the names of the indexes created.
    """
    existing = {
        r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")
    }
    created = []
    for name, ddl in FTS_TABLES.items():
        for statement in ddl:
            conn.exec_driver_sql(statement)
        if name not in existing:
            conn.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('rebuild')")
            created.append(name)
    return created


def _read_only_uri(path: Path) -> str:
    """A URI that reads ``path`` without creating or changing any file.

    ``as_uri`` escapes '#', '?' and '%'. A read-only connection to a WAL
    database creates ``-wal`` and ``-shm`` and, unable to checkpoint, leaves
    them behind; when neither exists no connection has the file open (a WAL
    database keeps both while it is open), so it is read as immutable instead.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if not any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm")):
        uri += "&immutable=1"
    return uri


def probe(path: Path) -> int | None:
    """Check an existing database file without changing it.

    Returns the schema version found, or ``None`` for a file that is new or
    empty. Raises :class:`ArchiveCorruptError` or :class:`ArchiveVersionError`.
    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    hint = f"move {path} aside to start a fresh archive, or point --data-dir elsewhere"
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
    except sqlite3.Error as exc:
        raise ArchiveCorruptError(f"cannot open archive {path}: {exc}", help_hint=hint) from exc
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id not in (0, APPLICATION_ID) or (tables and "schema_meta" not in tables):
            raise ArchiveCorruptError(f"{path} is not a Sylk archive", help_hint=hint)
        if not tables:
            return None
        check = conn.execute("PRAGMA quick_check").fetchall()
        if [r[0] for r in check] != ["ok"]:
            detail = "; ".join(str(r[0]) for r in check[:3])
            raise ArchiveCorruptError(f"archive {path} is damaged: {detail}", help_hint=hint)
        row = conn.execute("SELECT value FROM schema_meta WHERE key='version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ArchiveCorruptError(f"archive {path} is unreadable: {exc}", help_hint=hint) from exc
    finally:
        conn.close()
    if row is None or not str(row[0]).isdigit():
        raise ArchiveCorruptError(f"archive {path} has no schema version", help_hint=hint)
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise ArchiveVersionError(
            f"archive {path} has schema version {version}; this Sylk reads up to {SCHEMA_VERSION}",
            help_hint="upgrade Sylk, or point --data-dir elsewhere",
        )
    return version
