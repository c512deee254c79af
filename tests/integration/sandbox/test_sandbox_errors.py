"""What the sandbox says when it cannot do what was asked: typed errors, never a traceback."""

from __future__ import annotations

import asyncio
import errno
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.sandbox import (
    CommandNotRunnableError,
    ProtectedDirectoryError,
    SandboxSetupError,
    run_sandboxed,
)
from backend.sandbox.plan import build_plan
from backend.sandbox.support import LAUNCHER
from backend.skills.envelopes import ErrorCode, code_for
from tests.integration.sandbox.conftest import Scene


async def test_no_command_runs_inside_a_protected_directory(scene: Scene) -> None:
    with pytest.raises(ProtectedDirectoryError) as refused:
        await scene.run("ls", cwd=".sylk-data")
    assert code_for(refused.value) is ErrorCode.ACCESS_DENIED


async def test_a_failed_set_up_step_is_named_with_its_errno(scene: Scene, tmp_path: Path) -> None:
    if scene.level != "full":
        pytest.skip("without namespaces no step fails on a path that vanished")
    # The launcher as the runner starts it, told to mount a path that is not there.
    read_fd, write_fd = os.pipe()
    plan = build_plan(scene.level, workspace=scene.workspace, home=tmp_path)
    spec = plan.spec(["true"], scene.workspace, write_fd)
    spec["readonly"] = ["/no/such/dir"]
    (tmp_path / "spec").write_bytes(marshal.dumps(spec))
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-I", "-S", str(LAUNCHER), str(tmp_path / "spec")],
        pass_fds=(write_fd,), capture_output=True, check=False,
    )  # fmt: skip
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as status:
        line = status.read().decode()
    assert done.returncode == 125 and done.stderr == b""
    assert line.strip() == f"{errno.ENOENT} mount /no/such/dir", line
    error = SandboxSetupError("mount /no/such/dir", errno.ENOENT)
    assert code_for(error) is ErrorCode.INTERNAL and "ENOENT" in error.message


async def test_a_program_that_cannot_run_is_not_found(scene: Scene) -> None:
    with pytest.raises(CommandNotRunnableError) as missing:
        await run_sandboxed(
            ["/no/such/program", "-x"], cwd=scene.workspace, workspace=scene.workspace,
            timeout_s=30, level=scene.level,
        )  # fmt: skip
    assert missing.value.details and missing.value.details["errno"] == errno.ENOENT
    assert code_for(missing.value) is ErrorCode.NOT_FOUND


async def test_argv_runs_without_a_shell(scene: Scene, tmp_path: Path) -> None:
    run = await run_sandboxed(
        ["printf", "%s|", "$HOME", "a b"], cwd=scene.workspace, workspace=scene.workspace,
        timeout_s=30, level=scene.level,
    )  # fmt: skip
    assert run.exit_code == 0 and run.stdout == "$HOME|a b|" and run.level == scene.level
