"""What can go wrong running a command in the sandbox, as typed errors.

A timeout carries what the command printed so far; a set-up failure names the step
that failed and its errno (an operator can act on "mount /proc: EPERM", never on a
traceback); a level the machine cannot give is refused before anything runs.
"""

from __future__ import annotations

import errno as errnos
import os

from backend.errors import ErrorKind, SylkError


class CommandTimeoutError(SylkError):
    """A command ran past its time limit and was killed, with what it printed so far."""

    def __init__(self, timeout_s: float, stdout: str, stderr: str) -> None:
        super().__init__(
            f"command timed out after {timeout_s:g}s and was killed",
            details={"reason": "timeout", "timeout_s": timeout_s,
                     "stdout": stdout, "stderr": stderr},
        )  # fmt: skip


class SandboxSetupError(SylkError):
    """The sandbox could not be set up, so the command did not run."""

    def __init__(self, step: str, errno: int) -> None:
        name = errnos.errorcode.get(errno, str(errno))
        reason = os.strerror(errno) if errno else "failed"
        super().__init__(
            f"the sandbox could not be set up ({step}: {name}, {reason}); the command did not run",
            help_hint="set SYLK_SANDBOX=landlock (or none) to use a lesser sandbox",
            details={"reason": "sandbox_setup", "step": step, "errno": errno},
        )
        self.step, self.errno = step, errno


class CommandNotRunnableError(SylkError):
    """The program a command names could not be executed (not found, not executable)."""

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, program: str, errno: int) -> None:
        super().__init__(
            f"cannot run {program!r}: {os.strerror(errno) if errno else 'exec failed'}",
            details={"reason": "not_runnable", "program": program, "errno": errno},
        )


class SandboxUnavailableError(SylkError):
    """A sandbox level was asked for that this machine cannot give."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, wanted: str, available: str, detail: str) -> None:
        super().__init__(
            f"sandbox level {wanted!r} is not available here (only {available!r}: {detail})",
            details={"reason": "sandbox_unavailable", "wanted": wanted, "available": available},
        )


class ProtectedDirectoryError(SylkError):
    """A command was asked to run inside one of Sylk's protected directories."""

    error_kind = ErrorKind.DENIED

    def __init__(self, cwd: str) -> None:
        super().__init__(
            f"{cwd!r} is one of Sylk's own directories: no command runs there",
            details={"reason": "protected"},
        )
