"""The cluster benchmark runs end to end at a tiny size, on both executors, and says what
it measured.

A real run (a subprocess: the engine, the scripted model, a git fixture project checked
by Sylk's ruff and a real pytest, a local Ray head on 127.0.0.1): every pipeline passes
on each side, each edit lands once, each tester ran a test, the archive's writes were
counted, and Ray's extra costs are reported. No time is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "cluster_bench.py"


@pytest.mark.slow
def test_two_pipelines_pass_on_both_executors_and_each_figure_is_reported() -> None:
    tiny = ["--pipelines", "2", "--latency", "0", "--rounds", "1", "--executor", "both"]
    done = subprocess.run([sys.executable, str(BENCH), *tiny], cwd=ROOT, capture_output=True,
                          text=True, timeout=280, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    for side in ("local", "ray"):
        run = report[side]
        assert run["dags_passed"] == 1, run["failures"]
        assert run["pipelines_passed"] == run["modules_edited_once"] == 2
        assert run["pipelines_whose_tester_ran_pytest"] == 2
        assert run["overhead_ms"]["p95"] >= run["overhead_ms"]["median"]
        assert run["archive"]["model_calls"] == 6  # three scripted turns a pipeline
    # The driver's archive sees every local write, and only some of a worker's.
    assert (
        report["local"]["archive"]["write_transactions"]
        > (report["ray"]["archive"]["write_transactions"])
    )
    costs = report["ray"]["extra_costs"]
    assert costs["head_start_s"] > 0 and costs["first_task_ms"] > 0
    assert len(costs["driver_snapshot_ms"]) == 3 and len(costs["driver_apply_ms"]) == 3
    assert set(report["handoff_alone_ms"]) == {"snapshot_ms", "fetch_ms", "push_ms", "apply_ms"}
