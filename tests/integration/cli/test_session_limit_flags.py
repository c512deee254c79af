"""`sylk sessions new --max-tasks N --max-engineers N`: the session's worker limits kept
in its SessionConfig (a real process, then the archive read back); a bad value refused
with the usage before any session is made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from backend.engine import Engine
from tests.integration.plans.conftest import parts

SYLK = [sys.executable, "-m", "sylk_tui"]


def sylk(*args: str, data_dir: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    config_dir = data_dir.parent / "config"
    config_dir.mkdir(exist_ok=True)
    env = {"SYLK_CONFIG_DIR": str(config_dir), "SYLK_PROVIDER": "offline"}
    return subprocess.run(
        [*SYLK, *args, "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, **env},
        check=False,
    )


async def test_sessions_new_keeps_the_limits_and_refuses_a_bad_one(
    data_dir: Path, workspace: Path
) -> None:
    made = sylk(
        "sessions", "new", "limited", "--max-tasks", "2", "--max-engineers", "1",
        data_dir=data_dir, workspace=workspace,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    bad = sylk(
        "sessions", "new", "wrong", "--max-tasks", "0", data_dir=data_dir, workspace=workspace
    )
    assert bad.returncode != 0
    assert "/session limits [tasks N] [engineers N]" in bad.stderr, bad.stderr
    engine = Engine.from_parts(parts(data_dir, workspace))
    try:
        names = {s.name: s for s in engine.list_sessions()}
        assert "wrong" not in names  # refused before it was made
        config = names["limited"].config
        assert (config.max_concurrent_tasks, config.max_engineers) == (2, 1)
    finally:
        await engine.aclose()
