"""The test server itself: fresh databases, password auth, a kill and restart."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import make_url

from tests.support.postgres import PASSWORD, PASSWORD_ROLE, PgServer


def test_each_test_gets_a_fresh_empty_database(
    postgres_server: PgServer, postgres_url: str
) -> None:
    name = str(make_url(postgres_url).database)
    tables = postgres_server.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", name
    )
    assert tables == [(0,)]
    assert postgres_server.execute("SHOW fsync") == [("on",)]
    assert postgres_server.execute("SHOW synchronous_commit") == [("on",)]


def test_the_password_role_needs_its_password(postgres_server: PgServer) -> None:
    host = postgres_server.socket_dir
    with psycopg.connect(host=host, user=PASSWORD_ROLE, password=PASSWORD, dbname="postgres"):
        pass
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(host=host, user=PASSWORD_ROLE, password="wrong", dbname="postgres")
