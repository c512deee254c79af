"""Bringing an archive file to this Sylk's schema, in the writer's first transaction.

Every change so far is additive: tables and full-text indexes that are missing are
created (each new index back-filled), columns added to a table since are added with
their default (:data:`ADDED_COLUMNS`), and the recorded version moves up. Rows are
never rewritten; a field a newer model added reads as its default from an older row
(a session written before phases existed is ``idle``). :func:`schema.probe` has
already refused a file that is damaged, foreign or newer than this Sylk.
"""

from __future__ import annotations

from sqlalchemy import Connection, inspect

from backend.archive import postgres
from backend.archive.dialects import is_postgres, json_text, upsert
from backend.archive.schema import APPLICATION_ID, SCHEMA_META, SCHEMA_VERSION, TABLES, ensure_fts

_meta = SCHEMA_META

ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    # (table, column, its definition): each has a default, so rows before it read well
    ("usage", "estimated", "BOOLEAN NOT NULL DEFAULT FALSE"),
    ("usage", "pipeline_id", "VARCHAR"),
    ("sessions", "owner_user", "VARCHAR"),
    ("sessions", "owner_host", "VARCHAR"),
)


def migrate(conn: Connection, found: int | None) -> None:
    """Bring the database on ``conn`` from version ``found`` (``None``: a new file)
    to :data:`SCHEMA_VERSION`. The same steps on SQLite and PostgreSQL; the full-text
    indexes and the mark "this is a Sylk archive" are each database's own."""
    pg = is_postgres(conn)
    if pg:
        postgres.lock_for_migration(conn)
    for table in TABLES:
        table.create(conn, checkfirst=True)
    if pg:
        postgres.ensure_search(conn)
    else:
        ensure_fts(conn)
    _add_columns(conn)
    if found is None and not pg:
        conn.exec_driver_sql(f"PRAGMA application_id={APPLICATION_ID}")
    rows = [{"key": "version", "value": str(SCHEMA_VERSION)}]
    if pg:
        rows.append({"key": "application", "value": postgres.APPLICATION})
    if found is None or found < SCHEMA_VERSION:
        upsert(conn, _meta, rows, ["key"])


def _add_columns(conn: Connection) -> None:
    """Add the :data:`ADDED_COLUMNS` a file made before them lacks."""
    added = set()
    for table, column, definition in ADDED_COLUMNS:
        have = {c["name"] for c in inspect(conn).get_columns(table)}
        if column not in have:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            added.add(column)
    if "owner_user" in added:  # rows written with an owner in ``data`` keep it in SQL
        _fill_owners(conn)


def _fill_owners(conn: Connection) -> None:
    user, host = (json_text(conn, "data", "owner", f) for f in ("user", "host"))
    conn.exec_driver_sql(
        f"UPDATE sessions SET owner_user = {user}, owner_host = {host} WHERE {user} IS NOT NULL"
    )
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_sessions_owner_user ON sessions (owner_user)"
    )
