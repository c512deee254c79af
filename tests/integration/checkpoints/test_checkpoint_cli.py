"""`sylk sessions diff` and `sylk sessions undo`, run as real processes on a data dir
where an earlier engine recorded a turn's checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backend.engine import EngineConfig
from backend.engine.build import build
from tests.integration.checkpoints.conftest import files_of


def sylk(*args: str, data_dir: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", *args,
         "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False,
    )  # fmt: skip


async def test_diff_then_undo_from_the_shell(data_dir: Path, project: Path) -> None:
    parts = build(EngineConfig(data_dir=data_dir, workspace=project, watch_files=False))
    try:
        session = await parts.sessions.create_session("fixes")
        async with parts.checkpoints.turn(session.id, "engineer", project) as turn:
            await turn.before_change()
            (project / "src" / "app.py").write_text("changed\n")
            turn.turn_id = "t1"
    finally:
        await parts.aclose()
    before_undo = files_of(project)

    diff = sylk("sessions", "diff", "fixes", "--json", data_dir=data_dir, workspace=project)
    assert diff.returncode == 0, diff.stderr
    found = json.loads(diff.stdout)
    assert found["files"] == [{"path": "src/app.py", "status": "modified"}]
    assert "+changed" in found["patch"]
    assert files_of(project) == before_undo  # a diff changes nothing

    undo = sylk("sessions", "undo", "fixes", data_dir=data_dir, workspace=project)
    assert undo.returncode == 0, undo.stderr
    assert "restored: src/app.py" in undo.stdout
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 1\n"

    again = sylk("sessions", "undo", "fixes", data_dir=data_dir, workspace=project)
    assert again.returncode == 1
    assert again.stderr.startswith("sylk: error: nothing to undo")
    assert "Traceback" not in again.stderr
