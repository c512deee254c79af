"""``sylk repl`` as a real child process: fed through a pipe, or at a real terminal.

:func:`repl_env` keeps the host's keys and endpoints out and points the child at the
test's own data dir. :class:`Terminal` runs the repl on a pseudo-terminal (``os.openpty``)
so prompt-toolkit draws and reads keys as at a user's terminal; the test waits for what
the screen shows (escape sequences stripped), never for a guessed while.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from tests.support.polling import until_sync

CURSOR_QUERY = b"\x1b[6n"
"""prompt-toolkit asks where the cursor is; it draws its bottom toolbar once told."""
_ESCAPES = re.compile(
    r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])"
)
# Run in the child's own session: the terminal on its stdin becomes its controlling one
# (so ctrl+c there is a SIGINT, as at a user's terminal), then the repl replaces it.
_TAKE_THE_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def repl_env(data_dir: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return {**base, "SYLK_CONFIG_DIR": str(data_dir / "no-config"), **extra}


def repl_args(data_dir: Path, workspace: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "sylk_tui", "repl", "--data-dir", str(data_dir),
            "--workspace", str(workspace), *more]  # fmt: skip


def piped(
    lines: str, data_dir: Path, workspace: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """The repl reading ``lines`` from a pipe, to its end."""
    return subprocess.run(
        repl_args(data_dir, workspace), input=lines, capture_output=True, text=True,
        timeout=90, check=False, env=repl_env(data_dir, **env),
    )  # fmt: skip


class Terminal:
    """The repl on a pseudo-terminal of 120x30; what it drew, as plain text."""

    def __init__(self, data_dir: Path, workspace: Path, *more: str, **env: str) -> None:
        self._main, child = os.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TAKE_THE_TERMINAL, *repl_args(data_dir, workspace, *more)[1:]],
            stdin=child, stdout=child, stderr=child, start_new_session=True,
            env=repl_env(data_dir, TERM="xterm", **env),
        )  # fmt: skip
        os.close(child)
        self._raw = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._main, 4096)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            for _ in range(chunk.count(CURSOR_QUERY)):  # answered as a terminal does
                os.write(self._main, b"\x1b[1;1R")
            with self._lock:
                self._raw += chunk

    @property
    def text(self) -> str:
        with self._lock:
            raw = self._raw.decode("utf-8", "replace")
        return _ESCAPES.sub("", raw)

    def mark(self) -> int:
        """Where the output stands now: :meth:`expect` may look only after it."""
        return len(self.text)

    def expect(self, wanted: str, *, after: int = 0) -> int:
        """Wait until ``wanted`` is shown after ``after``; where it ends."""
        until_sync(lambda: wanted in self.text[after:], what=f"{wanted!r} on the terminal")
        return self.text.index(wanted, after) + len(wanted)

    def send(self, keys: str) -> None:
        os.write(self._main, keys.encode())

    def wait(self) -> int:
        code = self.process.wait(timeout=60)
        self._reader.join(timeout=5)
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        os.close(self._main)
