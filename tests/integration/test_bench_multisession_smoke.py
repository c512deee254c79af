"""The multi-session benchmark runs end to end at a tiny size and says what it measured.

It is a real run (a subprocess with the engine, the scripted model, a git repository and
its worktrees in a temporary directory): every plan passes and every engineer node wrote
its file into its own session's worktree, and each figure comes with its baseline. No
time is asserted; only that the figures are there and sane.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "multisession_bench.py"


@pytest.mark.slow
def test_a_tiny_run_passes_every_plan_and_reports_each_figure_with_its_baseline(
    tmp_path: Path,
) -> None:
    tiny = ["--sessions", "2", "--nodes", "2", "--latency", "0", "--rounds", "1"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(BENCH), *tiny, "--worktrees", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    engine = report["engine"]
    assert engine["dags_passed"] == 2 and engine["nodes_finished"] == 4
    assert engine["files_written"] == 4  # each in its own session's worktree
    assert engine["session_nodes_per_s"]["min"] > 0
    scheduler = report["scheduler"]
    assert set(scheduler["per_acquire_release"]) == {"pool", "semaphore"}
    assert set(scheduler["latency_shaped"]) == {"pool", "semaphore"}
    assert report["worktrees"]["count"] == 2 and report["worktrees"]["ratio"] > 0
    assert report["peak_rss_mb"]["after_engine"] >= report["peak_rss_mb"]["at_start"]
    assert not list(tmp_path.iterdir())  # the temporary directory went with the run
