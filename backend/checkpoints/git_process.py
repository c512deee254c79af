"""Running git against an untrusted work tree, safely.

The work tree is a workspace an agent (or a cloned repository) controls; the git
directory is Sylk's shadow repository in its data dir. So git must take nothing
from the work tree but file contents: no system or user config
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no hooks, no fsmonitor,
no replace refs, literal pathspecs, an allow-listed environment (no key of Sylk's
reaches git), a time limit, and a cap on what it may print. Failures are typed
errors, never tracebacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

from backend.errors import ErrorKind, SylkError

GIT_TIMEOUT_S = 120.0
MAX_GIT_OUTPUT = 256 * 1024 * 1024  # trees of a big workspace fit; a runaway does not

# Always on the command line, whatever the shadow repository's config says.
SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.symlinks=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=true",
    "core.quotePath=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "color.ui=never",
    "diff.renames=false",
    "diff.external=",
    "gc.auto=0",
)
_ALLOWED_ENV = frozenset({"PATH", "LANG", "LANGUAGE", "TZ"})


class CheckpointError(SylkError):
    """Checkpoints could not be taken, read or applied."""

    def failure_word(self) -> str:
        return "checkpoint"


class GitMissingError(CheckpointError):
    """git is not installed: checkpoints (and /undo, /diff) need it."""

    def __init__(self) -> None:
        super().__init__(
            "git is not installed, so Sylk cannot keep checkpoints (/undo, /diff)",
            help_hint="install git and restart Sylk",
        )

    def failure_word(self) -> str:
        return "git_missing"


class GitFailedError(CheckpointError):
    """A git command of the shadow repository failed or ran past its time limit."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"checkpoint git {what} failed: {detail.strip()[:500]}")
        self.what = what

    def failure_word(self) -> str:
        return "git_failed"


class GitOutputTooLargeError(CheckpointError):
    error_kind = ErrorKind.INVALID

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"checkpoint git {what} printed over {limit} bytes; stopped")


def git_env(git_dir: Path, work_tree: Path | None, index: Path | None) -> dict[str, str]:
    """The whole environment git gets: an allow-list plus what pins it to the shadow repo."""
    env = {k: v for k, v in os.environ.items() if k in _ALLOWED_ENV or k.startswith("LC_")}
    env.update(
        {
            "GIT_DIR": str(git_dir),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_AUTHOR_NAME": "Sylk",
            "GIT_AUTHOR_EMAIL": "sylk@localhost",
            "GIT_COMMITTER_NAME": "Sylk",
            "GIT_COMMITTER_EMAIL": "sylk@localhost",
            # No user dotfiles: HOME and XDG point into the shadow repository.
            "HOME": str(git_dir),
            "XDG_CONFIG_HOME": str(git_dir / "xdg"),
        }
    )
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    env.setdefault("PATH", os.defpath)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


def git_binary() -> str:
    found = shutil.which("git")
    if found is None:
        raise GitMissingError()
    return found


async def run_git(
    git_dir: Path,
    work_tree: Path,
    args: list[str],
    *,
    index: Path | None = None,
    stdin: bytes | None = None,
    limit: int = MAX_GIT_OUTPUT,
    truncate: bool = False,
    ok_codes: tuple[int, ...] = (0,),
    timeout_s: float = GIT_TIMEOUT_S,
    bare: bool = False,
) -> bytes:
    """Run ``git ARGS`` in its own process group; its stdout, at most ``limit`` bytes.

    Over the limit git is killed and the call fails, or with ``truncate`` what was
    read so far is returned (a bounded diff). A time-out or cancel kills the group.
    ``bare``: no work tree (to create the repository).
    """
    command = [git_binary()]
    for option in SAFE_CONFIG:
        command += ["-c", option]
    command += args
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=git_dir if bare else work_tree,
            env=git_env(git_dir, None if bare else work_tree, index),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitMissingError() from None
    except OSError as exc:
        raise GitFailedError(args[0], str(exc)) from None
    what = args[0]
    out = bytearray()
    err = bytearray()

    async def feed() -> None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()

    async def read_out() -> bool:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            out.extend(chunk)
            if len(out) > limit:
                return True
        return False

    async def read_err() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            if len(err) < 64 * 1024:
                err.extend(chunk)

    try:
        async with asyncio.timeout(timeout_s):
            _, over, _ = await asyncio.gather(feed(), read_out(), read_err())
            if over:
                _kill(proc.pid)
            code = await proc.wait()
    except (TimeoutError, asyncio.CancelledError) as exc:
        _kill(proc.pid)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise GitFailedError(what, f"timed out after {timeout_s:g}s") from None
    if over:
        if not truncate:
            raise GitOutputTooLargeError(what, limit)
        return bytes(out[:limit])
    if code not in ok_codes:
        raise GitFailedError(what, err.decode("utf-8", "replace") or f"exit code {code}")
    return bytes(out)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
