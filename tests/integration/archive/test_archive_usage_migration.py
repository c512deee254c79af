"""An archive whose usage table predates ``estimated`` (issue 14, defect 5) opens in this
Sylk: the column is added with its default, old rows read as reported, new estimated
rows are summed apart; and a row inserted without the column (what an older Sylk
writes) still goes in. On SQLite and on PostgreSQL (a team's server archive made by
an older Sylk meets a newer one)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from backend.archive.store import DB_NAME, Archive
from backend.llm.accounting import summarise
from tests.support.postgres import PgServer

OLD_USAGE = """CREATE TABLE usage (
    seq INTEGER NOT NULL PRIMARY KEY, session_id VARCHAR NOT NULL, turn_id VARCHAR NOT NULL,
    agent VARCHAR NOT NULL, provider VARCHAR NOT NULL, model VARCHAR NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
    cost_usd FLOAT, at VARCHAR NOT NULL)"""
OLD_ROW = (  # the columns named, as SQLAlchemy writes it
    "INSERT INTO usage (seq, session_id, turn_id, agent, provider, model, input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, at) "
    "VALUES (1, 's1', 't1', 'engineer', 'local', 'm', 100, 20, 0, 0, NULL, 'x')"
)


def _row(estimated: bool) -> dict[str, Any]:
    return {"session_id": "s1", "turn_id": "t2", "agent": "engineer", "provider": "local",
            "model": "m", "input_tokens": 50, "output_tokens": 5, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "cost_usd": None, "at": "y",
            "estimated": estimated}  # fmt: skip


def _columns(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[1] for r in conn.execute("PRAGMA table_info(usage)")]


async def test_a_usage_table_without_estimated_gets_the_column(data_dir: Path) -> None:
    Archive(data_dir).close()  # a real archive file, then its usage table as it was
    db = data_dir / DB_NAME
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE usage")
        conn.execute(OLD_USAGE)
        conn.execute(OLD_ROW)
    assert "estimated" not in _columns(db)

    archive = Archive(data_dir)
    try:
        assert "estimated" in _columns(db)
        [old] = summarise("s1", archive.usage_by_agent("s1")).agents
        assert old.usage.input_tokens == 100 and old.estimated_calls == 0
        await archive.arecord_usage([_row(estimated=True)])
        summary = summarise("s1", archive.usage_by_agent("s1"))
        assert summary.calls == 2 and summary.estimated_calls == 1
        assert summary.total.estimated and summary.total.input_tokens == 150
        assert archive.integrity_check() == "ok"
    finally:
        archive.close()

    with sqlite3.connect(db) as conn:  # an older Sylk's insert names no such column
        conn.execute(OLD_ROW.replace("(1,", "(9,"))
        assert conn.execute("SELECT estimated FROM usage WHERE seq = 9").fetchone() == (0,)
    Archive(data_dir).close()  # opening again adds nothing twice
    assert _columns(db).count("estimated") == 1


# -- the same on PostgreSQL: a team's archive made before the column ---------------

OLD_PG_ROW = (  # what an older Sylk inserts there: neither seq (the server's) nor estimated
    "INSERT INTO usage (session_id, turn_id, agent, provider, model, input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, at) "
    "VALUES ('s1', '{turn}', 'engineer', 'local', 'm', 100, 20, 0, 0, NULL, 'x')"
)


def _pg_columns(server: PgServer, database: str) -> list[str]:
    rows = server.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'usage'", database
    )
    return [r[0] for r in rows]


async def test_a_postgres_usage_table_without_the_later_columns_gets_them(
    tmp_path: Path, postgres_server: PgServer, postgres_url: str
) -> None:
    database = str(make_url(postgres_url).database)
    Archive(tmp_path, url=postgres_url).close()  # a real archive, then usage as it was
    postgres_server.execute(
        "ALTER TABLE usage DROP COLUMN estimated, DROP COLUMN pipeline_id", database
    )
    postgres_server.execute(OLD_PG_ROW.format(turn="t1"), database)
    assert not {"estimated", "pipeline_id"} & set(_pg_columns(postgres_server, database))

    archive = Archive(tmp_path, url=postgres_url)
    try:
        assert {"estimated", "pipeline_id"} <= set(_pg_columns(postgres_server, database))
        [old] = summarise("s1", archive.usage_by_agent("s1")).agents
        assert old.usage.input_tokens == 100 and old.estimated_calls == 0
        await archive.arecord_usage([_row(estimated=True)])
        summary = summarise("s1", archive.usage_by_agent("s1"))
        assert summary.calls == 2 and summary.estimated_calls == 1
        assert summary.total.estimated and summary.total.input_tokens == 150
    finally:
        archive.close()

    postgres_server.execute(OLD_PG_ROW.format(turn="t9"), database)  # an older Sylk's insert
    found = postgres_server.execute("SELECT estimated FROM usage WHERE turn_id = 't9'", database)
    assert found == [(False,)]
    Archive(tmp_path, url=postgres_url).close()  # opening again adds nothing twice
    assert _pg_columns(postgres_server, database).count("estimated") == 1
