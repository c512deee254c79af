"""What a turn's checkpoint costs on a workspace of ~5,000 small files.

Prints one JSON object: the median and max over ``--reps`` repetitions (each on a
fresh workspace and data dir) of

- ``first_snapshot_ms``: the session's first snapshot (a cold shadow repository:
  every file hashed and written as an object);
- ``second_snapshot_ms``: the next one, nothing changed (the index's stat cache);
- ``new_session_snapshot_ms``: another session's first snapshot (its index seeded);
- ``turn_overhead_ms``: a whole turn that edits ``--edits`` files (before, after,
  the checkpoint commit and ref), minus the edits themselves;
- ``undo_ms`` and ``diff_ms``: undoing that turn, and the session's diff.

    .venv/bin/python benchmarks/checkpoint_bench.py [--files 5000] [--reps 5] [--edits 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.checkpoints.service import Checkpoints


def _tree(root: Path, files: int) -> list[Path]:
    made = []
    for n in range(files):
        folder = root / f"pkg{n % 50:02}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{n:05}.py"
        path.write_text(f"VALUE_{n} = {n}\n" * 12)
        made.append(path)
    return made


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


async def _one(base: Path, files: int, edits: int) -> dict[str, float]:
    workspace, data = base / "ws", base / "data"
    data.mkdir()
    paths = _tree(workspace, files)
    checkpoints = Checkpoints(data)
    started = time.perf_counter()
    await checkpoints.snapshot("bench", workspace)
    first = _ms(started)
    started = time.perf_counter()
    await checkpoints.snapshot("bench", workspace)
    second = _ms(started)
    started = time.perf_counter()
    await checkpoints.snapshot("other", workspace)
    seeded = _ms(started)

    started = time.perf_counter()
    async with checkpoints.turn("bench", "engineer", workspace) as turn:
        await turn.before_change()
        edit_start = time.perf_counter()
        for path in paths[:edits]:
            path.write_text("changed\n")
        editing = _ms(edit_start)
        turn.turn_id = "t1"
    turn_total = _ms(started)
    assert turn.recorded is not None
    started = time.perf_counter()
    await checkpoints.diff("bench", workspace)
    diff = _ms(started)
    started = time.perf_counter()
    await checkpoints.undo("bench", workspace)
    undo = _ms(started)
    return {
        "first_snapshot_ms": first,
        "second_snapshot_ms": second,
        "new_session_snapshot_ms": seeded,
        "turn_overhead_ms": turn_total - editing,
        "diff_ms": diff,
        "undo_ms": undo,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()
    runs = []
    for _ in range(args.reps):
        base = Path(tempfile.mkdtemp(prefix="sylk-checkpoint-bench-"))
        try:
            runs.append(asyncio.run(_one(base, args.files, args.edits)))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    figures = {
        name: {
            "median": round(statistics.median(r[name] for r in runs), 1),
            "max": round(max(r[name] for r in runs), 1),
        }
        for name in runs[0]
    }
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False)
    print(json.dumps({
        "benchmark": "checkpoints",
        "files": args.files, "edits": args.edits, "reps": args.reps,
        "figures": figures,
        "machine": machine_info.machine(git=git.stdout.strip()),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
