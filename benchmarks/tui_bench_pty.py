"""Process-level figures for ``tui_bench.py``: what a user's terminal sees.

Each figure spawns a fresh process. The TUI runs on a pseudo-terminal of 120x40
(``TERM=xterm-256color``), as in a user's terminal or tmux, and its output is read
as the terminal would read it. Baselines run the same way in the same run:

- first frame: from spawn to the end of the first full frame written (the first
  cursor-addressed screen write after the alternate screen is entered, up to the
  first pause of 10 ms in the output), against a minimal Textual app (one Static);
  "ready": to the first write holding a marker of the working screen (the session's
  name), against the minimal app's first frame.
- idle CPU: once the app is ready and has settled, the CPU time of the whole process
  (all threads, ``/proc/PID/stat``) over a window, as a share of one core, and the
  bytes it wrote to the terminal meanwhile; against the minimal app idle the same way.
- ``sylk run`` and ``sylk mcp serve``: spawn to exit (``run "/session list"``) or to
  the ``initialize`` reply (``mcp serve`` over stdio), against ``python -c`` doing the
  minimal work (open the SQLite file and list, or read a line and answer it).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS, LINES = 120, 40
CURSOR_MOVE = re.compile(rb"\x1b\[\d+;\d+H")
ALT_SCREEN = b"\x1b[?1049h"
QUIET_S = 0.010
TICK_S = 1 / os.sysconf("SC_CLK_TCK")

MINIMAL_APP = """
from textual.app import App
from textual.widgets import Static

class Minimal(App[None]):
    def compose(self):
        yield Static("Hello from a minimal Textual app")

Minimal().run()
"""
MINIMAL_LIST = """
import json, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select 1").fetchall()
print(json.dumps(rows))
"""
MINIMAL_SERVER = """
import json, sys
request = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}), flush=True)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tui_bench", "version": "1"},
    },
}


@dataclass
class TerminalRun:
    """One process on a pseudo-terminal: its output as it arrived, timed from spawn."""

    pid: int
    fd: int
    started: float
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    def read(self, timeout: float) -> bool:
        """Read what is there within ``timeout`` seconds; False once the process closed it."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.chunks.append((time.perf_counter() - self.started, data))
        return True

    def output(self) -> bytes:
        return b"".join(data for _, data in self.chunks)

    def cpu_seconds(self) -> float:
        """User + system time of every thread of the process so far."""
        stat = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(stat[11]) + int(stat[12])) * TICK_S

    def wakeups(self) -> dict[str, int]:
        """Times each thread was scheduled so far (``/proc/PID/task/TID/schedstat``), by
        thread id and name: which threads wake while the app should sleep."""
        counts = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                runs = int((task / "schedstat").read_text().split()[2])
                name = (task / "comm").read_text().strip()
            except (FileNotFoundError, ProcessLookupError):
                continue
            counts[f"{task.name}:{name}"] = runs
        return counts

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def spawn(argv: list[str], env: dict[str, str]) -> TerminalRun:
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the program on the terminal
        os.chdir(ROOT)
        os.execve(argv[0], argv, {**env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    return TerminalRun(pid, fd, started)


def first_frame(
    run: TerminalRun, ready: bytes | None, deadline_s: float = 30.0
) -> dict[str, float]:
    """Seconds to the end of the first full frame and (``ready``) to the marker shown."""
    frame_start = frame_end = ready_at = None
    seen = b""
    while time.perf_counter() - run.started < deadline_s:
        framing = frame_start is not None and frame_end is None
        count = len(run.chunks)
        if not run.read(QUIET_S if framing else 0.05):
            break
        now = time.perf_counter() - run.started
        if len(run.chunks) == count:  # nothing new: a pause
            if framing and now - run.chunks[-1][0] >= QUIET_S:
                frame_end = run.chunks[-1][0]
        else:
            at, data = run.chunks[-1]
            seen += data
            entered = seen.find(ALT_SCREEN)
            if frame_start is None and entered >= 0 and CURSOR_MOVE.search(seen, entered):
                frame_start = at
            if ready is not None and ready_at is None and ready in seen:
                ready_at = at
        if frame_end is not None and (ready is None or ready_at is not None):
            break
    if frame_end is None or (ready is not None and ready_at is None):
        missing = f"no first frame (or no {ready!r}) within {deadline_s} s"
        raise RuntimeError(f"{missing}: {seen[-400:]!r}")
    return {"first_frame": frame_end, "ready": ready_at if ready_at is not None else frame_end}


def idle_cpu(run: TerminalRun, window_s: float, settle_s: float) -> dict[str, object]:
    """Share of one core used, and bytes written per second, over ``window_s`` of idling."""
    until = time.perf_counter() + settle_s
    while time.perf_counter() < until:
        run.read(0.05)
    cpu_before, written_before = run.cpu_seconds(), sum(len(d) for _, d in run.chunks)
    woken_before = run.wakeups()
    started = time.perf_counter()
    while time.perf_counter() - started < window_s:
        run.read(0.05)
    elapsed = time.perf_counter() - started
    cpu = run.cpu_seconds() - cpu_before
    written = sum(len(d) for _, d in run.chunks) - written_before
    woken = {
        thread: round((runs - woken_before.get(thread, 0)) / elapsed, 1)
        for thread, runs in run.wakeups().items()
    }
    return {
        "cpu_percent_of_core": round(100 * cpu / elapsed, 3),
        "cpu_ms": round(cpu * 1000, 1),
        "bytes_written_per_s": round(written / elapsed, 1),
        "window_s": round(elapsed, 1),
        "wakeups_per_s": sum(woken.values()),
        "wakeups_per_s_by_thread": {k: v for k, v in sorted(woken.items()) if v},
    }


def sylk_argv(data: Path, workspace: Path, *rest: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sylk_tui",
        "--data-dir",
        str(data),
        "--workspace",
        str(workspace),
        *rest,
    ]


def minimal_argv() -> list[str]:
    return [sys.executable, "-c", MINIMAL_APP]


def time_exit(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> float:
    """Seconds from spawn to exit (status 0 or 3, offline)."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-400:]!r}")
    return elapsed


def time_initialize(
    argv: list[str], env: dict[str, str], cwd: Path = ROOT, wait_s: float = 10.0
) -> float:
    """Seconds from spawn to the reply to ``initialize`` on stdout (stdio JSON-RPC)."""
    started = time.perf_counter()
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{argv} closed stdout before answering initialize")
            if json.loads(line).get("id") == 1:
                break
        elapsed = time.perf_counter() - started
        process.stdin.close()
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            process.kill()
    return elapsed


def baseline_list_argv(database: Path) -> list[str]:
    return [sys.executable, "-c", MINIMAL_LIST, str(database)]


def baseline_server_argv() -> list[str]:
    return [sys.executable, "-c", MINIMAL_SERVER]
