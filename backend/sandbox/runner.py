"""Run one command in the sandbox: spawn the launcher, stream its output, enforce the limit.

Every call gets a private temp dir (HOME and TMPDIR point into it; removed after the
call) and an allow-listed environment: the locale, the terminal, PATH, and never any
of Sylk's keys, whatever they are called. stdin is closed; each stream keeps its
last 64 KiB; ``on_output`` sees every chunk as it arrives. The time limit covers the
whole run, also after the command closed its output. At the limit or on cancel the
launcher is told to kill its whole tree (SIGUSR1), then its process group is
SIGKILLed whatever it did: nothing the command started outlives the call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import marshal
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.sandbox.errors import (
    CommandNotRunnableError,
    CommandTimeoutError,
    ProtectedDirectoryError,
    SandboxSetupError,
    SandboxUnavailableError,
)
from backend.sandbox.plan import SandboxLevel, SandboxPlan, build_plan
from backend.sandbox.support import LAUNCHER, LEVELS, sandbox_support

log = logging.getLogger(__name__)

MAX_OUTPUT = 64 * 1024
STOP_GRACE_S = 5.0  # for the launcher to kill its tree before its group is SIGKILLed
OutputSink = Callable[[str, str], None]
# What a command gets of Sylk's environment: an allow-list, so a credential under any
# name (DB_PASSWD, DATABASE_URL, GH_PAT, NPM_AUTH, SENTRY_DSN, ...) stays behind.
_ALLOWED_ENV = frozenset({"PATH", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG",
                          "LANGUAGE", "COLORTERM", "NO_COLOR"})  # fmt: skip
_ALLOWED_PREFIX = ("LC_",)


class Confines(Protocol):
    """What confines a call beyond the workspace (``backend.workspace.Confinement`` fits)."""

    @property
    def protected(self) -> tuple[Path, ...]: ...

    @property
    def network(self) -> bool: ...


@dataclass(frozen=True)
class NoConfinement:
    protected: tuple[Path, ...] = ()
    network: bool = False


UNCONFINED = NoConfinement()


@dataclass(frozen=True)
class SandboxRun:
    exit_code: int
    stdout: str
    stderr: str
    duration_ms: float
    level: SandboxLevel


def command_env(home: Path | None = None) -> dict[str, str]:
    """The allow-listed part of Sylk's environment; HOME and TMPDIR are ``home`` if given."""
    allowed = _ALLOWED_ENV if home is not None else _ALLOWED_ENV | {"HOME", "TMPDIR"}
    env = {k: v for k, v in os.environ.items()
           if k in allowed or k.startswith(_ALLOWED_PREFIX)}  # fmt: skip
    env.setdefault("PATH", os.defpath)
    if home is not None:
        env["HOME"] = env["TMPDIR"] = str(home)
    return env


def choose_level(wanted: SandboxLevel | None) -> SandboxLevel:
    """``wanted`` if this machine gives it (None: the best it gives), else a typed refusal."""
    support = sandbox_support()
    if wanted is None:
        return support.level
    if LEVELS.index(wanted) > LEVELS.index(support.level):
        raise SandboxUnavailableError(wanted, support.level, support.detail)
    return wanted


class _Tail:
    """One stream: its last MAX_OUTPUT bytes, and each decoded chunk handed on live."""

    def __init__(self, name: str, on_output: OutputSink | None) -> None:
        self.name, self.on_output, self.buf = name, on_output, bytearray()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            self.buf.extend(chunk)
            if len(self.buf) > MAX_OUTPUT:
                del self.buf[: len(self.buf) - MAX_OUTPUT]
            if self.on_output is not None and (text := self.decoder.decode(chunk)):
                try:
                    self.on_output(self.name, text)
                except Exception:  # a display's bug must not leave the command running
                    log.exception("on_output failed; the command runs on")

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Ask the launcher to kill its tree, then SIGKILL its group whatever it did."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGUSR1)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), STOP_GRACE_S)
    _kill_group(proc.pid)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), STOP_GRACE_S)


async def _stop_once_spawned(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """A call cancelled while its launcher starts: let the start finish, then stop its tree.

    The launcher runs (and may have started the command) before the loop has connected
    its pipes; a cancel in that window left to asyncio SIGKILLs the launcher alone, so
    at ``landlock`` its tree lives on, and on Python 3.11 then waits for good for a
    pipe those survivors hold open (seen as a hung call on a loaded machine)."""
    with contextlib.suppress(OSError):  # it never started: nothing to stop
        await _stop(await spawning)


async def _supervise(
    proc: asyncio.subprocess.Process, timeout_s: float, on_output: OutputSink | None
) -> tuple[int, _Tail, _Tail]:
    out, err = _Tail("stdout", on_output), _Tail("stderr", on_output)
    readers = asyncio.gather(out.drain(proc.stdout), err.drain(proc.stderr))

    async def finished() -> int:
        code = await proc.wait()  # the launcher returns once its whole tree is gone
        _kill_group(proc.pid)  # and where it cannot know (no Linux), its group goes
        await asyncio.shield(readers)
        return code

    try:
        code = await asyncio.wait_for(finished(), timeout_s)
    except (TimeoutError, asyncio.CancelledError) as exc:
        await _stop(proc)
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await readers
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise CommandTimeoutError(timeout_s, out.text(), err.text()) from None
    return code, out, err


def _failure(read_fd: int) -> tuple[str, int] | None:
    """The launcher's report of a failed step, if it wrote one."""
    os.set_blocking(read_fd, False)
    try:
        line = os.read(read_fd, 4096).decode("utf-8", errors="replace")
    except BlockingIOError:
        return None
    errno, _, step = line.strip().partition(" ")
    return (step, int(errno)) if errno.isdigit() else None


def _remove(path: Path) -> None:
    """Remove the call's dir, also what the command made unwritable inside it."""

    def unlock(func: object, target: str, exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU, follow_symlinks=False)
        with contextlib.suppress(OSError):
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            else:
                os.unlink(target)

    shutil.rmtree(path, onerror=unlock)


def _prepare(
    level: SandboxLevel, cwd: Path, workspace: Path, confinement: Confines
) -> tuple[Path, SandboxPlan]:
    """The call's private dir (its ``home`` inside) and the plan; blocking, so in a thread."""
    real = cwd.resolve()
    if any(real == p or p in real.parents for p in confinement.protected):
        raise ProtectedDirectoryError(str(cwd))
    call_dir = Path(tempfile.mkdtemp(prefix="sylk-run-"))
    try:
        home = call_dir / "home"
        home.mkdir(mode=0o700)
        plan = build_plan(
            level, workspace=workspace, home=home,
            protected=confinement.protected, network=confinement.network,
        )  # fmt: skip
    except BaseException:
        _remove(call_dir)
        raise
    return call_dir, plan


def _discard_prepared(done: asyncio.Future[tuple[Path, SandboxPlan]]) -> None:
    if not done.cancelled() and done.exception() is None:
        _remove(done.result()[0])


async def run_sandboxed(
    argv: Sequence[str],
    *,
    cwd: Path,
    workspace: Path,
    timeout_s: float,
    confinement: Confines = UNCONFINED,
    on_output: OutputSink | None = None,
    level: SandboxLevel | None = None,
) -> SandboxRun:
    """Run ``argv`` (no shell) in ``cwd`` confined to ``workspace``; see the module doc."""
    chosen = choose_level(level)
    started = time.perf_counter()
    pending = asyncio.ensure_future(
        asyncio.to_thread(_prepare, chosen, cwd, workspace, confinement)
    )
    try:
        call_dir, plan = await asyncio.shield(pending)
    except asyncio.CancelledError:
        pending.add_done_callback(_discard_prepared)  # the thread still makes the dir
        raise
    read_fd, write_fd = os.pipe()
    try:
        spec_file = call_dir / "spec"
        spec_file.write_bytes(marshal.dumps(plan.spec(argv, cwd, write_fd)))
        spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", str(LAUNCHER), str(spec_file),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=command_env(call_dir / "home"),
            start_new_session=True, pass_fds=(write_fd,),
        ))  # fmt: skip
        try:
            proc = await asyncio.shield(spawning)
        except OSError as exc:
            raise SandboxSetupError("spawn the launcher", exc.errno or 0) from None
        except asyncio.CancelledError:
            await asyncio.shield(_stop_once_spawned(spawning))
            raise
        os.close(write_fd)
        write_fd = -1
        code, out, err = await _supervise(proc, timeout_s, on_output)
        failed = _failure(read_fd)
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        await asyncio.to_thread(_remove, call_dir)
    if failed is not None:
        step, errno = failed
        if step == "exec":
            raise CommandNotRunnableError(argv[0], errno)
        raise SandboxSetupError(step, errno)
    duration = round((time.perf_counter() - started) * 1000.0, 1)
    return SandboxRun(code, out.text(), err.text(), duration, chosen)
