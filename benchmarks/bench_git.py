"""The git environment the benchmarks' fixture repositories are made with: no system or
global config (a developer's hooks, templates or signing never run in a benchmark) and a
fixed identity for the commits."""

from __future__ import annotations

import os

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def git_env() -> dict[str, str]:
    """``GIT_ENV`` with this process's PATH: the whole environment for a git subprocess."""
    return {"PATH": os.environ.get("PATH", os.defpath), **GIT_ENV}
