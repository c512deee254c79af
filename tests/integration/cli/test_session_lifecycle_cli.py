"""`sylk sessions snapshot|restore|stats`, run as real processes on a real data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backend.engine import EngineConfig
from backend.engine.build import build


def sylk(*args: str, data_dir: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", *args,
         "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False,
    )  # fmt: skip


async def test_snapshot_list_restore_and_stats_from_the_shell(
    data_dir: Path, workspace: Path
) -> None:
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    try:
        await parts.sessions.create_session("cli work")
    finally:
        await parts.aclose()

    taken = sylk("sessions", "snapshot", "cli work", "--label", "first", data_dir=data_dir,
                 workspace=workspace)  # fmt: skip
    assert taken.returncode == 0, taken.stderr
    assert "snapshot " in taken.stdout and "'cli work'" in taken.stdout
    listed = sylk("sessions", "snapshot", "cli work", "--list", data_dir=data_dir,
                  workspace=workspace)  # fmt: skip
    assert listed.returncode == 0 and "first" in listed.stdout, listed.stderr

    restored = sylk("sessions", "restore", "cli work", "first", data_dir=data_dir,
                    workspace=workspace)  # fmt: skip
    assert restored.returncode == 0, restored.stderr
    assert "session 'cli work' restored" in restored.stdout

    missing = sylk("sessions", "restore", "cli work", "nope", data_dir=data_dir,
                   workspace=workspace)  # fmt: skip
    assert missing.returncode == 1
    assert missing.stderr.startswith("sylk: error: no snapshot 'nope' of session 'cli work'")
    assert "Traceback" not in missing.stderr

    stats = sylk("sessions", "stats", "cli work", "--json", data_dir=data_dir,
                 workspace=workspace)  # fmt: skip
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    assert figures["name"] == "cli work" and figures["messages"] >= 1  # the restore's notice
