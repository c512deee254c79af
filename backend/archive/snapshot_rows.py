"""A session's snapshots in the archive's ``snapshots`` table, read one at a time.

``Archive.save_snapshot`` writes a row; here a row is found by id, unique id prefix or
label and parsed with typed errors (a document that does not parse, or one written by a
newer Sylk, is :class:`~backend.sessions.snapshots.SnapshotUnreadableError` naming the
row, and is left as it is), and a session's rows are listed without parsing their
documents, so one bad row never hides the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError
from sqlalchemy import Connection, select

from backend.archive.schema import SNAPSHOTS
from backend.archive.store import Archive
from backend.sessions.models import SessionSnapshot
from backend.sessions.snapshots import (
    SNAPSHOT_VERSION,
    SnapshotNotFoundError,
    SnapshotUnreadableError,
)

_rows = SNAPSHOTS.c


@dataclass(frozen=True)
class SnapshotRow:
    """A snapshot as listed: its id, when, its label."""

    id: str
    created_at: str
    label: str | None

    @property
    def short_id(self) -> str:
        return self.id[:8]


def list_snapshots(archive: Archive, session_id: str) -> list[SnapshotRow]:
    """The session's snapshots, oldest first (documents not parsed)."""

    def read(conn: Connection) -> list[SnapshotRow]:
        query = (
            select(_rows.id, _rows.created_at, _rows.label)
            .where(_rows.session_id == session_id)
            .order_by(_rows.created_at)
        )
        return [SnapshotRow(r[0], r[1], r[2]) for r in conn.execute(query)]

    return archive.read(read)


def find_snapshot(archive: Archive, session_id: str, ref: str, session_name: str) -> SnapshotRow:
    """The session's snapshot named by ``ref``: its id, a unique id prefix, or its label
    (the newest with that label)."""
    wanted = ref.strip()
    rows = list_snapshots(archive, session_id)
    exact = [r for r in rows if r.id == wanted]
    by_prefix = [r for r in rows if wanted and r.id.startswith(wanted.lower())]
    by_label = [r for r in rows if wanted and r.label == wanted]
    for found in (exact, by_prefix if len(by_prefix) == 1 else [], by_label[-1:]):
        if found:
            return found[0]
    raise SnapshotNotFoundError(wanted, session_name)


def load_snapshot(archive: Archive, snapshot_id: str) -> SessionSnapshot:
    """Parse one stored document; a bad or newer one is a typed error."""

    def read(conn: Connection) -> str | None:
        query = select(_rows.data).where(_rows.id == snapshot_id)
        value = conn.execute(query).scalar()
        return None if value is None else str(value)

    data = archive.read(read)
    if data is None:
        raise SnapshotNotFoundError(snapshot_id, "?")
    try:
        raw = json.loads(data)
    except ValueError:
        raise SnapshotUnreadableError(snapshot_id, "its document is not JSON") from None
    version = raw.get("version", 1) if isinstance(raw, dict) else None
    if not isinstance(version, int):
        raise SnapshotUnreadableError(snapshot_id, "its document is not a snapshot")
    if version > SNAPSHOT_VERSION:
        raise SnapshotUnreadableError(
            snapshot_id, f"document version {version} is newer than this Sylk's"
        )
    try:
        return SessionSnapshot.model_validate(raw)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "the document"
        raise SnapshotUnreadableError(
            snapshot_id, f"{exc.error_count()} field(s) do not parse, first {where}"
        ) from None
