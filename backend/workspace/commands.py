"""Commands an agent runs in its session's workspace: a shell, sandboxed, bounded, killed whole.

:func:`run_command_line` resolves the working directory inside the workspace and
hands ``/bin/sh -c COMMAND`` to :func:`backend.sandbox.run_sandboxed`, which confines
it as far as this machine allows (``full``: Landlock in namespaces; ``landlock``;
``none``: unconfined, said so in the result's ``sandbox`` and in /status). Whatever
the level: an allow-listed environment (never Sylk's keys, whatever they are
called), stdin closed, the last 64 KiB of each stream kept, a time limit covering
the whole run, and at the limit or on cancel every process the command started is
killed.
"""

from __future__ import annotations

from typing import Any

from backend.errors import ErrorKind, SylkError
from backend.sandbox import (
    MAX_OUTPUT,
    CommandTimeoutError,
    OutputSink,
    SandboxLevel,
    command_env,
    run_sandboxed,
)
from backend.workspace.confinement import Confinement
from backend.workspace.files import Workspace

__all__ = [
    "MAX_OUTPUT",
    "CommandTimeoutError",
    "NoSuchDirectoryError",
    "child_env",
    "run_command_line",
]

_NOTHING_MORE = Confinement()


class NoSuchDirectoryError(SylkError):
    """A command was asked to run in a directory the workspace does not have."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, cwd: str) -> None:
        super().__init__(f"{cwd!r} is not a directory in the workspace", details={})


def child_env() -> dict[str, str]:
    """The allow-listed part of Sylk's environment (HOME and TMPDIR as they are)."""
    return command_env()


async def run_command_line(
    ws: Workspace,
    command: str,
    cwd: str,
    timeout_s: float,
    *,
    confinement: Confinement = _NOTHING_MORE,
    on_output: OutputSink | None = None,
    level: SandboxLevel | None = None,
) -> dict[str, Any]:
    """Run ``command`` with a shell in the sandbox; on timeout kill it all and raise.

    ``on_output(stream, text)`` sees each chunk as it arrives ("stdout"/"stderr");
    ``level`` forces a lesser sandbox than the machine's best (tests, SYLK_SANDBOX).
    """
    directory = ws.resolve(cwd)
    if not directory.is_dir():
        raise NoSuchDirectoryError(cwd)
    run = await run_sandboxed(
        ["/bin/sh", "-c", command],
        cwd=directory,
        workspace=ws.root,
        timeout_s=timeout_s,
        confinement=confinement,
        on_output=on_output,
        level=level,
    )
    return {
        "command": command,
        "exit_code": run.exit_code,
        "stdout": run.stdout,
        "stderr": run.stderr,
        "duration_ms": run.duration_ms,
        "sandbox": run.level,
    }
