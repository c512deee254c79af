"""Archive tables and the check that a database file is safe to open.

The probe opens the file read-only before anything writes to it, so a corrupt
file, a foreign database or one written by a newer Sylk is reported and left
exactly as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import Connection, Index
from sqlmodel import Field, SQLModel

from backend.errors import ArchiveCorruptError, ArchiveVersionError

# 1: the first archive. 2: sessions carry their phase (in ``data``; a row of 1 reads
# as idle) and ``session_phases`` logs its moves. A file is migrated on open
# (``migration``); a Sylk that reads only 1 refuses a 2 instead of misreading it.
SCHEMA_VERSION = 2
# PRAGMA application_id marks the file as a Sylk archive ("SYLK" in ASCII).
APPLICATION_ID = 0x53594C4B


class SchemaMeta(SQLModel, table=True):
    __tablename__ = "schema_meta"
    key: str = Field(primary_key=True)
    value: str


class SessionRow(SQLModel, table=True):
    __tablename__ = "sessions"
    id: str = Field(primary_key=True)
    name: str
    state: str = Field(index=True)
    created_at: str
    last_active_at: str
    closed: bool = False
    data: str


class TranscriptRow(SQLModel, table=True):
    __tablename__ = "transcript"
    __table_args__ = (Index("ix_transcript_session_seq", "session_id", "seq"),)
    seq: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    session_id: str
    type: str
    source: str
    timestamp: str
    text: str
    envelope: str


class SnapshotRow(SQLModel, table=True):
    __tablename__ = "snapshots"
    id: str = Field(primary_key=True)
    session_id: str = Field(index=True)
    created_at: str
    label: str | None = None
    data: str


class StepRow(SQLModel, table=True):
    """One step of an agent turn (model call, tool call, result, final, error)."""

    __tablename__ = "agent_steps"
    __table_args__ = (Index("ix_steps_session_seq", "session_id", "seq"),)
    seq: int | None = Field(default=None, primary_key=True)
    session_id: str
    turn_id: str = Field(index=True)
    role: str
    step: int
    kind: str
    at: str
    data: str


class UsageRow(SQLModel, table=True):
    """Tokens and cost of one model call."""

    __tablename__ = "usage"
    __table_args__ = (Index("ix_usage_session_agent", "session_id", "agent"),)
    seq: int | None = Field(default=None, primary_key=True)
    session_id: str
    turn_id: str
    agent: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None = None
    at: str
    # Counted locally because the server sent no usage. Added without a version bump
    # (``migration.ADDED_COLUMNS``): the default lets an older Sylk still insert rows.
    estimated: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})


class PreferenceRow(SQLModel, table=True):
    """A global user preference (e.g. a tool the user chose), shared by every session."""

    __tablename__ = "preferences"
    key: str = Field(primary_key=True)
    value: str  # JSON
    updated_at: str


class SessionPhaseRow(SQLModel, table=True):
    """One move of a session's phase (``backend.sessions.phases.PhaseChange``); the
    session's row holds the phase it is in, this log how and why it got there."""

    __tablename__ = "session_phases"
    __table_args__ = (Index("ix_session_phases_session_seq", "session_id", "seq"),)
    seq: int | None = Field(default=None, primary_key=True)
    session_id: str
    old: str
    new: str
    reason: str
    approval: str | None = None
    at: str


class PlanRow(SQLModel, table=True):
    """One version of a plan the Architect (or a client) proposed in a session, with
    its status; a modification is a new version that supersedes the one before.
    Added without a version bump: an older Sylk of schema 2 leaves the table alone."""

    __tablename__ = "plans"
    __table_args__ = (
        Index("ux_plans_session_plan_version", "session_id", "plan_id", "version", unique=True),
    )
    seq: int | None = Field(default=None, primary_key=True)
    session_id: str
    plan_id: str
    version: int
    status: str
    supersedes: int | None = None  # the version this one replaced
    source: str  # who submitted it: an agent, or "mcp"
    feedback: str = ""  # the user's words that led to this version
    document: str  # JSON, with execution_order filled in
    created_at: str
    updated_at: str
    decided_by: str | None = None


class ChronicleEntryRow(SQLModel, table=True):
    """One entry of the Archivalist's chronicle ("what was done"), written by one session.

    ``seq`` is the rowid the full-text index points at; ``promoted`` entries are
    readable from every session, the others only from the session that wrote them.
    """

    __tablename__ = "chronicle_entries"
    __table_args__ = (
        Index("ix_chronicle_session_time", "session_id", "created_at"),
        Index("ix_chronicle_pattern_key", "pattern_key"),
    )
    seq: int | None = Field(default=None, primary_key=True)
    id: str = Field(unique=True)
    session_id: str
    category: str = Field(index=True)
    title: str | None = None
    content: str
    agent: str | None = None
    data: str = "{}"  # JSON
    pattern_key: str | None = None  # patterns: normalised category/name, for N-uses promotion
    created_at: str = Field(index=True)
    promoted: bool = False
    promoted_at: str | None = None
    promoted_reason: str | None = None


class ChronicleFileRow(SQLModel, table=True):
    """A file a session read, modified or created, as the chronicle records it."""

    __tablename__ = "chronicle_files"
    __table_args__ = (Index("ix_chronicle_files_session_at", "session_id", "at"),)
    seq: int | None = Field(default=None, primary_key=True)
    session_id: str
    path: str
    operation: str
    summary: str | None = None
    changes: str = "[]"  # JSON list of strings
    agent: str | None = None
    at: str


TABLES = [
    SchemaMeta.__table__,  # type: ignore[attr-defined]
    SessionRow.__table__,  # type: ignore[attr-defined]
    TranscriptRow.__table__,  # type: ignore[attr-defined]
    SnapshotRow.__table__,  # type: ignore[attr-defined]
    StepRow.__table__,  # type: ignore[attr-defined]
    UsageRow.__table__,  # type: ignore[attr-defined]
    PreferenceRow.__table__,  # type: ignore[attr-defined]
    ChronicleEntryRow.__table__,  # type: ignore[attr-defined]
    ChronicleFileRow.__table__,  # type: ignore[attr-defined]
    SessionPhaseRow.__table__,  # type: ignore[attr-defined]
    PlanRow.__table__,  # type: ignore[attr-defined]
]

SESSION_OWNED = [
    TranscriptRow.__table__,  # type: ignore[attr-defined]
    SnapshotRow.__table__,  # type: ignore[attr-defined]
    ChronicleFileRow.__table__,  # type: ignore[attr-defined]
    SessionPhaseRow.__table__,  # type: ignore[attr-defined]
    PlanRow.__table__,  # type: ignore[attr-defined]
]
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
