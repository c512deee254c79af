"""One local Ray head (127.0.0.1, two CPUs) for every cluster test that needs one: it is
the slowest thing these tests start (``xdist_group("ray")`` keeps them on one worker)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.cluster.ray_runs import HOOKS, git


@pytest.fixture(scope="session")
def ray_head() -> Iterator[None]:
    """A head on loopback, no dashboard, its sockets under a short temp path. The workers
    inherit this process's environment: semantic search off, and this venv's ``pytest``
    and ``ruff`` first on PATH, so a tester on a worker finds them as the user's would."""
    ray = pytest.importorskip("ray")
    saved = {k: os.environ.get(k) for k in ("SYLK_SEMANTIC", "PATH")}
    os.environ["SYLK_SEMANTIC"] = "off"
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), saved["PATH"] or ""])
    with tempfile.TemporaryDirectory(prefix="r", dir="/tmp") as temp:
        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
                 _temp_dir=temp, log_to_driver=False)  # fmt: skip
        try:
            yield
        finally:
            ray.shutdown()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.fixture
def repo(workspace: Path, tmp_path: Path) -> Path:
    """The session's repository: two files committed, hooks planted that would leave a mark."""
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_text("one\n")
    (workspace / "b.txt").write_text("two\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "start")
    for hook in HOOKS:
        path = workspace / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {tmp_path / 'hooks-ran'}\n")
        path.chmod(0o755)
    return workspace
