"""A child Python process a test talks to by its stdout lines, and may kill -9.

The kill-and-resume tests run the work in a real child so a SIGKILL is a real crash:
the test waits for the lines the child prints at the points it cares about (never a
sleep), kills it there, and starts another on the same files.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path


class ChildProcess:
    """``python SCRIPT ARGS`` with stdout read line by line; stderr kept in a file."""

    def __init__(
        self,
        script: Path,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stderr: Path,
        hang_s: float,
    ) -> None:
        self.hang_s = hang_s  # a guard against a hung child, not a timing
        self.stderr = stderr.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True, cwd=cwd, env=dict(env),
        )  # fmt: skip
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.seen: list[str] = []

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, *wanted: str) -> None:
        """Until the child has printed every line of ``wanted`` (in any order)."""
        missing = set(wanted)
        while missing - set(self.seen):
            line = self.lines.get(timeout=self.hang_s)
            assert line is not None, f"the child ended before {missing}: {self.seen}"
            self.seen.append(line)

    def kill(self) -> None:
        """kill -9, and the child is gone."""
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=self.hang_s) == -signal.SIGKILL
        self.stderr.close()

    def finish(self) -> None:
        """Read to the end; the child must exit 0."""
        while (line := self.lines.get(timeout=self.hang_s)) is not None:
            self.seen.append(line)
        assert self.proc.wait(timeout=self.hang_s) == 0, self.stderr.name
        self.stderr.close()
