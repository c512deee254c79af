"""The owner in SQL: ``owner_user`` and ``owner_host`` on ``sessions``, filled on write,
added (and filled from each row's JSON) when an older archive is opened, on both backends."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, inspect

from tests.integration.team_archive.teammates import teammate

HOST = socket.gethostname()


def _owners(conn: Connection) -> dict[str, tuple[Any, Any]]:
    rows = conn.exec_driver_sql("SELECT name, owner_user, owner_host FROM sessions")
    return {r[0]: (r[1], r[2]) for r in rows}


def _as_before_owner_columns(conn: Connection) -> None:
    conn.exec_driver_sql("DROP INDEX ix_sessions_owner_user")
    for column in ("owner_user", "owner_host"):
        conn.exec_driver_sql(f"ALTER TABLE sessions DROP COLUMN {column}")


async def test_owner_columns_are_written_and_an_older_archive_gets_them(
    data_dir: Path, workspace: Path, archive_url: str
) -> None:
    alice = teammate(data_dir, workspace, "alice", archive_url)
    try:
        await alice.create_session("alice work", isolation=False)
        assert alice.archive.read(_owners) == {"alice work": ("alice", HOST)}
        alice.archive.write(_as_before_owner_columns)
    finally:
        await alice.aclose()
    bob = teammate(data_dir, workspace, "bob", archive_url)
    try:
        assert bob.archive.read(_owners) == {"alice work": ("alice", HOST)}  # from the JSON
        indexes = bob.archive.read(lambda conn: inspect(conn).get_indexes("sessions"))
        assert ["owner_user"] in [i["column_names"] for i in indexes]
        assert bob.list_sessions(include_closed=True) == []  # asked of SQL: none are bob's
        await bob.create_session("bob work", isolation=False)
        assert bob.archive.read(_owners)["bob work"] == ("bob", HOST)
        rows = {r.name: str(r.owner) for r in bob.team.team_rows()}
        assert rows == {"alice work": f"alice@{HOST}", "bob work": f"bob@{HOST}"}
        assert bob.team.user_sessions() == tuple(
            r.id for r in bob.team.team_rows() if r.name == "bob work"
        )
    finally:
        await bob.aclose()


async def test_a_row_without_an_owner_reads_as_the_readers(data_dir: Path, workspace: Path) -> None:
    alice = teammate(data_dir, workspace, "alice")
    try:
        made = await alice.create_session("before owners", isolation=False)

        def forget(conn: Connection) -> None:  # as a Sylk before owners wrote it
            conn.exec_driver_sql(
                "UPDATE sessions SET owner_user = NULL, owner_host = NULL, "
                "data = json_remove(data, '$.owner')"
            )

        alice.archive.write(forget)
    finally:
        await alice.aclose()
    bob = teammate(data_dir, workspace, "bob")
    try:
        assert [s.id for s in bob.list_sessions()] == [made.id]
        assert [str(r.owner) for r in bob.team.team_rows()] == [f"bob@{HOST}"]
    finally:
        await bob.aclose()
