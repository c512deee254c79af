"""What the checkpoint tests compare: a workspace's files, links and modes, byte for byte."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

State = dict[str, tuple[str, bytes]]


def files_of(root: Path) -> State:
    """Every file and link under ``root`` (``.git/`` aside) with its kind/mode and content."""
    found: State = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            found[rel] = ("link", os.readlink(path).encode())
        elif stat.S_ISREG(info.st_mode):
            found[rel] = (oct(stat.S_IMODE(info.st_mode)), path.read_bytes())
    return found


def git(root: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
           "GIT_COMMITTER_EMAIL": "u@x"}  # fmt: skip
    done = subprocess.run(
        ["git", *args], check=False, cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def project(workspace: Path) -> Path:
    """A small project: two modules, a script, a note."""
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 1\n")
    (workspace / "src" / "util.py").write_text("X = 1\n")
    (workspace / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(workspace / "run.sh", 0o755)
    (workspace / "NOTES.md").write_text("notes\n")
    return workspace
