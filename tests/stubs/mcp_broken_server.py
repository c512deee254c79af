"""MCP servers that misbehave at startup, for the hub's lifecycle tests. No SDK, no network.

Run as ``python tests/stubs/mcp_broken_server.py MODE PIDS_FILE``; it appends its own
pid (and its child's, when it spawns one) to ``PIDS_FILE`` as soon as it runs, so a
test can check afterwards that none of them survived. Modes:

- ``hang``: reads its stdin but never answers ``initialize``.
- ``hang-child``: the same, after starting a child that sleeps (in its process group).
- ``stubborn``: hangs, ignores SIGTERM and end of input: only SIGKILL ends it.
- ``garbage``: a non-MCP program: prints lines that are not JSON-RPC, then hangs.
- ``garbage-exit``: prints lines that are not JSON-RPC, then exits with code 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SLEEPER = "import time\nwhile True: time.sleep(60)"


def note(pids_file: Path, pid: int) -> None:
    with pids_file.open("a") as out:
        out.write(f"{pid}\n")


def hang(*, ignore_input_end: bool = False) -> None:
    """Read requests and never answer; end at end of input unless told to ignore it."""
    for _line in sys.stdin:
        pass
    while ignore_input_end:
        time.sleep(60)


def main() -> None:
    mode, pids_file = sys.argv[1], Path(sys.argv[2])
    note(pids_file, os.getpid())
    if mode == "hang":
        hang(ignore_input_end=True)
    elif mode == "hang-child":
        child = subprocess.Popen([sys.executable, "-c", SLEEPER], stdin=subprocess.DEVNULL)
        note(pids_file, child.pid)
        hang(ignore_input_end=True)
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        hang(ignore_input_end=True)
    elif mode in ("garbage", "garbage-exit"):
        for n in range(3):
            print(f"Welcome to not-an-mcp-server, line {n}", flush=True)
        if mode == "garbage":
            hang(ignore_input_end=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
