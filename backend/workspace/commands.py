"""Commands an agent runs in its session's workspace: a shell, bounded, killed whole.

The command runs in its own process group with an allow-listed environment (the
locale, the terminal, PATH and HOME; never Sylk's keys, whatever they are called),
stdin closed, and its output kept to the last 64 KiB of each stream. The time
limit covers the whole run, also after the command closed its output; at the
limit (or when the caller is cancelled) the whole group is killed. Not yet
sandboxed: that is the next room's work (see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from typing import Any

from backend.errors import ErrorKind, SylkError
from backend.workspace.files import Workspace

MAX_OUTPUT = 64 * 1024
# What a command gets of Sylk's environment: an allow-list, so a credential under any
# name (DB_PASSWD, DATABASE_URL, GH_PAT, NPM_AUTH, SENTRY_DSN, ...) stays behind.
_ALLOWED_ENV = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR",
                          "LANG", "LANGUAGE", "COLORTERM", "NO_COLOR"})  # fmt: skip
_ALLOWED_PREFIX = ("LC_",)


class NoSuchDirectoryError(SylkError):
    """A command was asked to run in a directory the workspace does not have."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, cwd: str) -> None:
        super().__init__(f"{cwd!r} is not a directory in the workspace", details={})


class CommandTimeoutError(SylkError):
    """A command ran past its time limit and was killed, with what it printed so far."""

    def __init__(self, timeout_s: float, stdout: str, stderr: str) -> None:
        super().__init__(
            f"command timed out after {timeout_s:g}s and was killed",
            details={"reason": "timeout", "timeout_s": timeout_s,
                     "stdout": stdout, "stderr": stderr},
        )  # fmt: skip


def child_env() -> dict[str, str]:
    """The allow-listed part of the parent's environment."""
    return {
        k: v for k, v in os.environ.items() if k in _ALLOWED_ENV or k.startswith(_ALLOWED_PREFIX)
    }


async def _drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        sink.extend(chunk)
        if len(sink) > MAX_OUTPUT:
            del sink[: len(sink) - MAX_OUTPUT]


def _text(buf: bytearray) -> str:
    return buf.decode("utf-8", errors="replace")


async def run_command_line(
    ws: Workspace, command: str, cwd: str, timeout_s: float
) -> dict[str, Any]:
    """Run ``command`` with a shell; on timeout kill its process group and raise."""
    directory = ws.resolve(cwd)
    if not directory.is_dir():
        raise NoSuchDirectoryError(cwd)
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_shell(
        command,
        cwd=directory,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_env(),
        start_new_session=True,
    )
    out, err = bytearray(), bytearray()
    readers = asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))

    async def finished() -> int:
        await asyncio.shield(readers)
        return await proc.wait()  # within the limit too: closing its output ends nothing

    try:
        code = await asyncio.wait_for(finished(), timeout_s)
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await readers
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise CommandTimeoutError(timeout_s, _text(out), _text(err)) from None
    return {
        "command": command,
        "exit_code": code,
        "stdout": _text(out),
        "stderr": _text(err),
        "duration_ms": round((time.perf_counter() - started) * 1000.0, 1),
    }
