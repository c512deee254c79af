"""Run one check tool in the sandbox and keep all it printed, whatever happens.

The sandbox keeps only each stream's last 64 KiB, but a JSON report must be read
whole, so the chunks are gathered through ``on_output`` (up to ``MAX_CAPTURE`` per
stream; past it the output is marked cut and a parser will refuse it rather than
read half a report). Every way a run can end becomes a :class:`ToolOutcome`: it
finished (any exit code), it was killed at the time limit (with what it printed),
its program could not start, or the sandbox could not be set up. Nothing here raises
for a tool's behaviour; a workspace that is one of Sylk's own directories does.

Where the executable lives: a project's own install first (``.venv/bin``, ``venv/bin``,
``node_modules/.bin``; it is the project's code, and runs confined like the rest),
then ``PATH`` without the workspace's entries, as discovery decides it.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.knowledge.tool_discovery.installed import system_which
from backend.pipelines.checks.results import ToolRunStatus
from backend.sandbox import (
    CommandNotRunnableError,
    CommandTimeoutError,
    Confines,
    SandboxLevel,
    SandboxSetupError,
    SandboxUnavailableError,
    run_sandboxed,
    sandbox_support,
)

MAX_CAPTURE = 16 * 1024 * 1024
LOCAL_BINS = {"python": (".venv/bin", "venv/bin"), "node": ("node_modules/.bin",)}


@dataclass(frozen=True)
class ToolOutcome:
    status: ToolRunStatus  # CLEAN here means "finished"; the parser decides the rest
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: float
    level: SandboxLevel | None
    detail: str = ""
    cut: bool = False  # an output stream passed MAX_CAPTURE

    @property
    def finished(self) -> bool:
        return self.status is ToolRunStatus.CLEAN


class _Capture:
    def __init__(self) -> None:
        self.parts: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.sizes = {"stdout": 0, "stderr": 0}
        self.cut = False

    def __call__(self, stream: str, text: str) -> None:
        if self.sizes[stream] + len(text) > MAX_CAPTURE:
            self.cut = True
            return
        self.sizes[stream] += len(text)
        self.parts[stream].append(text)

    def text(self, stream: str) -> str:
        return "".join(self.parts[stream])


def locate_executable(
    executable: str, ecosystem: str, workspace: Path, path_env: str | None
) -> str | None:
    """The executable's absolute path: the project's own install, else PATH; None if absent."""
    for folder in LOCAL_BINS.get(ecosystem, ()):
        candidate = workspace / folder / executable
        try:
            st = candidate.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
            return str(candidate)
    found = system_which(executable, path_env, workspace)
    return str(found) if found is not None else None


async def run_tool(
    argv: Sequence[str],
    *,
    workspace: Path,
    confinement: Confines,
    timeout_s: float,
    level: SandboxLevel | None = None,
) -> ToolOutcome:
    capture = _Capture()
    ran_at = level or sandbox_support().level
    try:
        run = await run_sandboxed(
            list(argv),
            cwd=workspace,
            workspace=workspace,
            timeout_s=timeout_s,
            confinement=confinement,
            on_output=capture,
            level=level,
        )
    except CommandTimeoutError as exc:
        details = exc.details or {}
        return ToolOutcome(
            ToolRunStatus.TIMED_OUT,
            None,
            capture.text("stdout") or str(details.get("stdout", "")),
            capture.text("stderr") or str(details.get("stderr", "")),
            timeout_s * 1000.0,
            ran_at,
            f"killed after {timeout_s:g}s, with everything it started",
            capture.cut,
        )
    except CommandNotRunnableError as exc:
        return ToolOutcome(ToolRunStatus.NOT_RUNNABLE, None, "", "", 0.0, ran_at, exc.message)
    except (SandboxSetupError, SandboxUnavailableError) as exc:
        return ToolOutcome(ToolRunStatus.SANDBOX_FAILED, None, "", "", 0.0, None, exc.message)
    return ToolOutcome(
        ToolRunStatus.CLEAN,
        run.exit_code,
        capture.text("stdout"),
        capture.text("stderr"),
        run.duration_ms,
        run.level,
        "",
        capture.cut,
    )


def short(text: str, limit: int = 600) -> str:
    """The end of a tool's output, for a detail line (the end says why it stopped)."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
