"""A real repository to attack from inside the sandbox, at each level this machine gives.

``level`` runs a test once per confined level (``full``, and ``landlock`` forced as
the fallback); a level the machine lacks is skipped, never faked. The workspace is a
real git repository with Sylk's protected data inside it and a protected config dir
beside it, each holding a secret that must never come back in a command's output.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backend.sandbox import SandboxLevel, sandbox_support
from backend.sandbox.support import LEVELS
from backend.workspace.commands import run_command_line
from backend.workspace.confinement import Confinement
from backend.workspace.files import Workspace

SECRET = "sylk-test-secret-7f3a9c"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


@dataclass
class Scene:
    """The workspace and what lies around it, and a way to run a command there."""

    root: Path  # the test's own tmp dir, holding everything below
    workspace: Path
    outside: Path  # a directory beside the workspace: must stay untouched
    inner_secret: Path  # Sylk's data dir, inside the workspace
    outer_secret: Path  # Sylk's config dir, outside it
    secret_file: Path  # a protected file (a config file) inside the workspace
    level: SandboxLevel
    confinement: Confinement

    async def run(self, command: str, *, cwd: str = ".", timeout_s: float = 60, **kw: Any) -> Any:
        kw.setdefault("confinement", self.confinement)
        ws = Workspace(self.workspace)
        return await run_command_line(ws, command, cwd, timeout_s, level=self.level, **kw)


@pytest.fixture(params=["full", "landlock"])
def level(request: pytest.FixtureRequest) -> SandboxLevel:
    wanted: SandboxLevel = request.param
    support = sandbox_support()
    if LEVELS.index(wanted) > LEVELS.index(support.level):
        pytest.skip(f"this machine gives {support.level!r}: {support.detail}")
    return wanted


@pytest.fixture
def scene(tmp_path: Path, level: SandboxLevel) -> Iterator[Scene]:
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("VALUE = 1\n")
    (workspace / "README.md").write_text("hello\n")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first")
    inner = workspace / ".sylk-data"
    inner.mkdir()
    (inner / "sylk.db").write_text(SECRET + "-db")
    outer = tmp_path / "config" / "sylk"
    outer.mkdir(parents=True)
    (outer / "config.toml").write_text(f'api_key = "{SECRET}-key"\n')
    secret_file = workspace / "sylk.toml"
    secret_file.write_text(f'api_key = "{SECRET}-file"\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    confinement = Confinement.of(workspace, inner, inner / "sylk.db", outer, secret_file)
    yield Scene(tmp_path, workspace, outside, inner, outer, secret_file, level, confinement)
