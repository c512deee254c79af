"""Opening an archive from a URL that cannot be used: each a typed error with a hint,
nothing written, the password never shown; and ``sylk run`` says so without a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from backend.archive.schema import SCHEMA_VERSION
from backend.archive.store import Archive
from backend.config.settings import ConfigError
from backend.errors import (
    ArchiveCorruptError,
    ArchiveUnavailableError,
    ArchiveVersionError,
    SylkError,
)
from tests.support.postgres import PASSWORD_ROLE, PgServer

WRONG = "wrong-secret-horse"


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT table_name FROM information_schema.tables "
                     "WHERE table_schema = 'public'")
            )  # fmt: skip
            return {str(r[0]) for r in rows}
    finally:
        engine.dispose()


def _run_sql(url: str, sql: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("not a url at all", "is not a database URL"),
        ("mysql://root:hunter2@db/sylk", "scheme 'mysql'"),
        ("postgresql+asyncpg://u@h/db", "scheme 'postgresql+asyncpg'"),
        ("sqlite://", "names no SQLite file"),
        ("postgresql+psycopg://u:hunter2@h", "names no database"),
    ],
)
def test_a_url_sylk_cannot_use_is_a_config_error(tmp_path: Path, url: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)) as raised:
        Archive(tmp_path, url=url)
    assert "hunter2" not in str(raised.value) and raised.value.help_hint
    assert not any(tmp_path.iterdir())  # nothing written


def test_an_unreachable_server_and_a_wrong_password(
    tmp_path: Path, postgres_server: PgServer
) -> None:
    nowhere = f"postgresql+psycopg://postgres:{WRONG}@/db?host={tmp_path}"
    with pytest.raises(ArchiveUnavailableError) as raised:
        Archive(tmp_path, url=nowhere)
    assert WRONG not in str(raised.value) and "***" in str(raised.value)
    socket = postgres_server.socket_dir
    wrong = f"postgresql+psycopg://{PASSWORD_ROLE}:{WRONG}@/postgres?host={socket}"
    with pytest.raises(ArchiveUnavailableError, match="password authentication failed") as bad:
        Archive(tmp_path, url=wrong)
    assert WRONG not in str(bad.value) and bad.value.help_hint


def test_a_database_of_other_tables_is_refused_untouched(postgres_url: str, tmp_path: Path) -> None:
    _run_sql(postgres_url, "CREATE TABLE invoices (id integer PRIMARY KEY)")
    with pytest.raises(ArchiveCorruptError, match="not a Sylk archive"):
        Archive(tmp_path, url=postgres_url)
    assert _tables(postgres_url) == {"invoices"}


def test_a_newer_archive_is_refused_and_an_older_one_migrated(
    postgres_url: str, tmp_path: Path
) -> None:
    Archive(tmp_path, url=postgres_url).close()
    made = _tables(postgres_url)
    assert {"sessions", "transcript", "chronicle_entries", "schema_meta"} <= made
    newer = SCHEMA_VERSION + 1
    _run_sql(postgres_url, f"UPDATE schema_meta SET value = '{newer}' WHERE key = 'version'")
    with pytest.raises(ArchiveVersionError, match=f"schema version {newer}"):
        Archive(tmp_path, url=postgres_url)
    # An archive from before usage.pipeline_id: the column comes back, the version moves up.
    _run_sql(postgres_url, "UPDATE schema_meta SET value = '1' WHERE key = 'version'")
    _run_sql(postgres_url, "ALTER TABLE usage DROP COLUMN pipeline_id")
    archive = Archive(tmp_path, url=postgres_url)
    try:
        version = archive.read(
            lambda c: c.execute(text("SELECT value FROM schema_meta WHERE key='version'")).scalar()
        )
        assert version == str(SCHEMA_VERSION)
        assert archive.usage_by_agent() == []
    finally:
        archive.close()


def test_sylk_run_on_an_unusable_database_url_is_a_clear_error(
    tmp_path: Path, postgres_server: PgServer
) -> None:
    socket = postgres_server.socket_dir
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env |= {
        "SYLK_CONFIG_DIR": str(tmp_path / "config"),
        "SYLK_DATABASE_URL": f"postgresql+psycopg://{PASSWORD_ROLE}@/postgres?host={socket}",
        "SYLK_DATABASE_PASSWORD": WRONG,
    }
    ran = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "hello", "--data-dir", str(tmp_path / "data"),
         "--workspace", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert ran.returncode != 0
    assert "cannot reach the archive database" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr and WRONG not in ran.stderr + ran.stdout
    assert issubclass(ArchiveUnavailableError, SylkError)
