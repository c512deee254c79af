"""Archive tables and the check that a database file is safe to open.

The probe opens the file read-only before anything writes to it, so a corrupt
file, a foreign database or one written by a newer Sylk is reported and left
exactly as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from backend.errors import ArchiveCorruptError, ArchiveVersionError

SCHEMA_VERSION = 1
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


class PreferenceRow(SQLModel, table=True):
    """A global user preference (e.g. a tool the user chose), shared by every session."""

    __tablename__ = "preferences"
    key: str = Field(primary_key=True)
    value: str  # JSON
    updated_at: str


TABLES = [
    SchemaMeta.__table__,  # type: ignore[attr-defined]
    SessionRow.__table__,  # type: ignore[attr-defined]
    TranscriptRow.__table__,  # type: ignore[attr-defined]
    SnapshotRow.__table__,  # type: ignore[attr-defined]
    StepRow.__table__,  # type: ignore[attr-defined]
    UsageRow.__table__,  # type: ignore[attr-defined]
    PreferenceRow.__table__,  # type: ignore[attr-defined]
]


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
