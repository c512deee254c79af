"""What differs between the archive's two databases, SQLite and PostgreSQL, in one place.

Statements decide by the connection they run on (``conn.dialect.name``), so the same
write or read function serves both. PostgreSQL's SQLAlchemy dialect is imported
only inside the PostgreSQL branch: a laptop on SQLite never loads it.

Raw SQL in the archive and the chronicle is written with ``?`` placeholders (SQLite's
style); :func:`driver_sql` runs it as it is on SQLite and with psycopg's ``%s`` on
PostgreSQL. The SQL strings are the code's own constants: user text only ever
travels as a parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, CursorResult, String, Table, cast, func, literal_column
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.util.typing import TupleAny, Unpack


def is_postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def driver_sql(conn: Connection, sql: str, args: Any = ()) -> CursorResult[Unpack[TupleAny]]:
    """Run ``sql`` (``?`` placeholders) with ``args`` (a tuple, or a list of tuples for
    many rows) straight on the driver: no Core compile per call."""
    if is_postgres(conn):
        sql = sql.replace("%", "%%").replace("?", "%s")
    return conn.exec_driver_sql(sql, args)


def upsert(conn: Connection, table: Table, rows: list[dict[str, Any]], keys: Sequence[str]) -> None:
    """Insert ``rows``; a row whose ``keys`` exist already replaces that row's other columns."""
    if is_postgres(conn):
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt: Any = pg_insert(table)
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(table)
    changed = {c: stmt.excluded[c] for c in rows[0] if c not in keys}
    conn.execute(stmt.on_conflict_do_update(index_elements=list(keys), set_=changed), rows)


def json_field_set(conn: Connection, column: Any, field: str, value: str) -> ColumnElement[Any]:
    """``column`` (JSON text) with its top-level ``field`` set to the string ``value``."""
    if is_postgres(conn):
        from sqlalchemy.dialects.postgresql import JSONB

        path: ColumnElement[Any] = literal_column(f"'{{{field}}}'")  # the code's own name
        as_json = func.to_jsonb(cast(value, String()))
        return cast(func.jsonb_set(cast(column, JSONB), path, as_json), String())
    return func.json_set(column, f"$.{field}", value)


def json_text(conn: Connection, column: str, *path: str) -> str:
    """SQL for the text at ``path`` inside the JSON text column ``column`` (NULL if absent).

    ``column`` and ``path`` are the code's own names, never user input."""
    if is_postgres(conn):
        return f"({column}::jsonb #>> '{{{','.join(path)}}}')"
    return f"json_extract({column}, '$.{'.'.join(path)}')"
