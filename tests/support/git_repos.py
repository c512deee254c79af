"""Real git repositories for tests: made with the git on the PATH, no user config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@localhost",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@localhost",
}


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo`` (the test's own, trusted), its stdout."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(repo), **_ENV}
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_repo(root: Path, files: dict[str, str], *, branch: str = "main") -> Path:
    """A repository at ``root`` with ``files`` committed on ``branch``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", branch)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "--all")
    git(root, "commit", "-q", "-m", "initial")
    return root


def show(repo: Path, rev: str, path: str) -> str:
    """The file ``path`` as commit ``rev`` holds it."""
    return git(repo, "show", f"{rev}:{path}")
