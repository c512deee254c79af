"""The archive on a PostgreSQL server: the URL, the engine, the probe, full-text search.

A team points ``database_url`` at one server and shares its history. The tables are
schema.py's, created by the same :func:`migration.migrate`; where SQLite keeps FTS5
indexes, PostgreSQL gets a ``tsvector`` column (``GENERATED ALWAYS … STORED``, so
every writer keeps it current without triggers) with a GIN index.

psycopg is imported only here, and only when a PostgreSQL URL is opened. Every
error names the server by its URL with the password hidden.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import URL, Connection, Engine, create_engine, inspect, make_url, select, text
from sqlalchemy.exc import ArgumentError, DBAPIError

from backend.archive.schema import SCHEMA_META, SCHEMA_VERSION
from backend.config.settings import ConfigError
from backend.errors import ArchiveCorruptError, ArchiveUnavailableError, ArchiveVersionError

APPLICATION = "sylk"
"""``schema_meta``'s ``application`` row: this database is a Sylk archive (SQLite's
files say so with ``PRAGMA application_id``)."""
CONNECT_TIMEOUT_S = 10
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgresql+psycopg": "postgresql+psycopg"}
_URL_HINT = "use sqlite:///PATH or postgresql+psycopg://USER@HOST/DATABASE"
# Serialises two Sylk processes creating or migrating the same database at once.
_MIGRATION_LOCK = 0x53594C4B

SEARCH_DDL = (
    "ALTER TABLE chronicle_entries ADD COLUMN IF NOT EXISTS search tsvector GENERATED ALWAYS "
    "AS (to_tsvector('english', coalesce(title, '') || ' ' || coalesce(content, ''))) STORED",
    "CREATE INDEX IF NOT EXISTS ix_chronicle_entries_search ON chronicle_entries "
    "USING GIN (search)",
    "ALTER TABLE transcript ADD COLUMN IF NOT EXISTS search tsvector GENERATED ALWAYS "
    "AS (to_tsvector('english', coalesce(text, ''))) STORED",
    "CREATE INDEX IF NOT EXISTS ix_transcript_search ON transcript USING GIN (search)",
)


def locate(raw: str | None, data_dir: Path) -> Path | URL:
    """Where the archive lives: a SQLite file (the default, ``data_dir/sylk.db``) or a
    PostgreSQL URL. Raises :class:`ConfigError` for anything else."""
    if raw is None or not raw.strip():
        return data_dir / "sylk.db"
    try:
        url = make_url(raw.strip())
    except ArgumentError:  # the text may hold a password: it is not repeated
        raise ConfigError("database_url is not a database URL", help_hint=_URL_HINT) from None
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise ConfigError("database_url names no SQLite file", help_hint=_URL_HINT)
        return Path(url.database).expanduser()
    driver = _DRIVERS.get(url.drivername)
    if driver is None:
        raise ConfigError(
            f"database_url has the scheme {url.drivername!r}, which Sylk cannot use",
            help_hint=_URL_HINT,
        )
    if not url.database:
        raise ConfigError(f"database_url {shown(url)} names no database", help_hint=_URL_HINT)
    return url.set(drivername=driver)


def shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def make_engine(url: URL, pool_size: int) -> Engine:
    """An engine whose pool holds ``pool_size`` connections (more on demand)."""
    try:
        import psycopg  # noqa: F401  (only to say what is missing, before SQLAlchemy does)
    except ImportError:
        raise ConfigError(
            "database_url names a PostgreSQL server, but psycopg is not installed",
            help_hint="pip install 'sylk-tui[postgres]'",
        ) from None
    return create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,  # a connection the server dropped is replaced, not handed out
        hide_parameters=True,  # rows never appear in an error's text
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "sylk"},
    )


def unavailable(url: URL, exc: BaseException) -> ArchiveUnavailableError:
    """The typed error for a server that cannot be reached or refused the login."""
    cause = getattr(exc, "orig", None) or exc
    reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    if url.password:
        reason = reason.replace(str(url.password), "***")
    return ArchiveUnavailableError(
        f"cannot reach the archive database {shown(url)}: {reason}",
        help_hint="check that the server runs, the host, user and password "
        "(SYLK_DATABASE_PASSWORD) are right, and the database exists",
    )


def probe(engine: Engine, url: URL) -> int | None:
    """The schema version of the database, or None for an empty one; refuses, writing
    nothing, a database that holds other tables or a newer Sylk's archive."""
    hint = "point database_url at an empty database or at a Sylk archive"
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            if not tables:
                return None
            if "schema_meta" not in tables:
                raise ArchiveCorruptError(
                    f"the database {shown(url)} is not a Sylk archive (it holds other tables)",
                    help_hint=hint,
                )
            meta = SCHEMA_META.c
            rows = {str(k): str(v) for k, v in conn.execute(select(meta.key, meta.value))}
    except DBAPIError as exc:
        raise unavailable(url, exc) from None
    version = rows.get("version", "")
    if rows.get("application") != APPLICATION or not version.isdigit():
        raise ArchiveCorruptError(
            f"the database {shown(url)} is not a Sylk archive (no Sylk schema version)",
            help_hint=hint,
        )
    if int(version) > SCHEMA_VERSION:
        raise ArchiveVersionError(
            f"the archive {shown(url)} has schema version {version}; "
            f"this Sylk reads up to {SCHEMA_VERSION}",
            help_hint="upgrade Sylk, or point database_url elsewhere",
        )
    return int(version)


def lock_for_migration(conn: Connection) -> None:
    """Held until the migrating transaction ends: a second Sylk waits, then finds the
    tables made."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})


def ensure_search(conn: Connection) -> None:
    """The ``search`` columns and their GIN indexes; a new column fills itself from the
    rows already there."""
    for statement in SEARCH_DDL:
        conn.exec_driver_sql(statement)
