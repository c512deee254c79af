"""The sandbox every command an agent or Sylk runs in a workspace goes through.

- ``support``: what this machine gives (:func:`sandbox_support`: level ``full``,
  ``landlock`` or ``none``, and a sentence for /status), probed once.
- ``plan``: which paths get which Landlock rights, what is mounted read-only or
  hidden; pure, decided in Sylk.
- ``launcher``: the stdlib-only process that sets the sandbox up and execs the
  command (run by path, never imported by Sylk at run time).
- ``runner``: :func:`run_sandboxed`, the async entry point (time limit, output tail
  and live output, kill of the whole tree).

See docs/ARCHITECTURE.md for what each level confines and what it does not.
"""

from backend.sandbox.errors import (
    CommandNotRunnableError,
    CommandTimeoutError,
    ProtectedDirectoryError,
    SandboxSetupError,
    SandboxUnavailableError,
)
from backend.sandbox.plan import SandboxLevel
from backend.sandbox.runner import (
    MAX_OUTPUT,
    Confines,
    OutputSink,
    SandboxRun,
    command_env,
    run_sandboxed,
)
from backend.sandbox.support import SandboxSupport, sandbox_support

__all__ = [
    "MAX_OUTPUT",
    "CommandNotRunnableError",
    "CommandTimeoutError",
    "Confines",
    "OutputSink",
    "ProtectedDirectoryError",
    "SandboxLevel",
    "SandboxRun",
    "SandboxSetupError",
    "SandboxSupport",
    "SandboxUnavailableError",
    "command_env",
    "run_sandboxed",
    "sandbox_support",
]
