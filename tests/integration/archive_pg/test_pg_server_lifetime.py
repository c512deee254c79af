"""No test server outlives its run: not when pytest ends, not when it is SIGKILLed
(the guard stops it), not when the guard dies too (the next run sweeps it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.polling import until_sync
from tests.support.postgres import ROOT, PgServer, running_server, start_server, sweep_stale

REPO_ROOT = Path(__file__).resolve().parents[3]
OWNER = """
import sys, time
from tests.support.postgres import running_server
with running_server() as server:
    print(server.data, server.pid, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _gone(pid: int, home: Path) -> None:
    """pg_ctl stop returns once the pid file is gone, a moment before the process."""
    until_sync(lambda: not _alive(pid), what=f"postmaster {pid} ends")
    assert not home.exists()


def test_a_sigkilled_owner_s_server_is_stopped_and_removed_by_its_guard() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    try:
        assert owner.stdout is not None
        data, pid = owner.stdout.readline().split()
        assert _alive(int(pid))
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
    until_sync(lambda: not _alive(int(pid)), what="the guard stops the postmaster")
    until_sync(lambda: not Path(data).parent.exists(), what="the guard removes its folder")


def test_a_server_whose_owner_and_guard_are_gone_is_swept() -> None:
    home = ROOT / "run-swept-by-test"
    (home / "data").mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    server = start_server(home / "data")  # no guard: as if it had been killed too
    (home / "owner").write_text(f"{dead.stdout.strip()} 0")  # an owner that has ended
    pid = server.pid
    try:
        sweep_stale()
        _gone(pid, home)
    finally:
        if _alive(pid):
            server.stop()


def test_a_server_stops_at_once_and_leaves_nothing() -> None:
    with running_server() as server:
        pid, home = server.pid, server.data.parent
        assert server.execute("SHOW fsync") == [("on",)]
        assert server.execute("SHOW synchronous_commit") == [("on",)]
    _gone(pid, home)


def test_the_postmaster_killed_and_restarted_keeps_committed_rows() -> None:
    with running_server() as server:
        server.execute("CREATE TABLE kept (n int)")
        server.execute("INSERT INTO kept VALUES (1)")
        before = server.pid
        server.kill_and_restart()
        assert server.pid != before
        assert server.execute("SELECT n FROM kept") == [(1,)]


def test_a_server_sees_its_own_data_folder(postgres_server: PgServer) -> None:
    [(folder,)] = postgres_server.execute("SHOW data_directory")
    assert Path(folder) == postgres_server.data
