"""Code index build time and memory on the Python standard library, against ``ctags -R``.

The stdlib of the running interpreter (``sysconfig.get_paths()["stdlib"]``, without
``site-packages`` and ``__pycache__``) is copied to a temp dir first, so the edits
of the incremental phase never touch the real one and both tools read the same
tree from a warm page cache. Prints one JSON object.

    .venv/bin/python benchmarks/index_bench.py [--edits 20] [--ctags-reps 3]

Phases: ``ctags -R`` (median of reps); a full build into a fresh sidecar (wall
time, ru_maxrss growth); the same build again on another fresh sidecar under
tracemalloc (Python heap peak; tracemalloc slows the build, so that run is not
timed); a no-op rebuild (stat only); ``locate``/``search`` latency; ``--edits``
one-line edits, each followed by ``update_files([path])`` (p50/p95/max).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.knowledge.code.index import CodeIndex


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def copy_stdlib(dest: Path) -> Path:
    src = Path(sysconfig.get_paths()["stdlib"])
    tree = dest / "stdlib"
    shutil.copytree(
        src,
        tree,
        symlinks=True,
        ignore=shutil.ignore_patterns("site-packages", "__pycache__"),
    )
    return tree


def time_ctags(tree: Path, work: Path, reps: int) -> tuple[float, int]:
    times = []
    tags = work / "tags"
    for _ in range(reps):
        started = time.perf_counter()
        subprocess.run(["ctags", "-R", "-f", str(tags), str(tree)], check=True)
        times.append(time.perf_counter() - started)
    lines = sum(1 for line in tags.open(errors="replace") if not line.startswith("!_"))
    return statistics.median(times), lines


def counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("files", "symbols", "imports")
        }


def query_latencies(index: CodeIndex, db: Path) -> tuple[list[float], list[float]]:
    """Per-call ms of ``locate`` (200 symbol names, every third one lower-cased so the
    case-insensitive tier runs) and ``search`` (50 words drawn from symbol names)."""
    rng = random.Random(7)
    with sqlite3.connect(db) as conn:
        names = [n for (n,) in conn.execute("SELECT DISTINCT name FROM symbols ORDER BY name")]
    sample = rng.sample(names, 200)
    locate_ms, search_ms = [], []
    for k, name in enumerate(sample):
        started = time.perf_counter()
        index.locate(name.lower() if k % 3 == 0 else name)
        locate_ms.append((time.perf_counter() - started) * 1000)
    for name in sample[:50]:
        word = max(name.split("_"), key=len)
        started = time.perf_counter()
        index.search(word, limit=20)
        search_ms.append((time.perf_counter() - started) * 1000)
    return locate_ms, search_ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--ctags-reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree = copy_stdlib(work)
        ctags_s, ctags_tags = time_ctags(tree, work, args.ctags_reps)

        rss_before = maxrss_mib()
        index = CodeIndex(tree, work / "index.db")
        stats = index.build()
        rss_after = maxrss_mib()
        table_counts = counts(work / "index.db")
        db_mib = sum(p.stat().st_size for p in work.glob("index.db*")) / 2**20

        noop = index.build()
        locate_ms, search_ms = query_latencies(index, work / "index.db")

        tracemalloc.start()
        traced = CodeIndex(tree, work / "traced.db")
        traced.build()
        heap_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        traced.close()

        rng = random.Random(20240611)
        files = sorted(p for p in tree.rglob("*.py") if p.stat().st_size > 4096)
        latencies = []
        for k, path in enumerate(rng.sample(files, args.edits)):
            lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
            at = rng.randrange(len(lines))
            lines[at] = lines[at] + f"  # edit {k}"
            path.write_text("\n".join(lines), encoding="utf-8")
            started = time.perf_counter()
            index.update_files([path])
            latencies.append((time.perf_counter() - started) * 1000)
        index.close()

        # inclusive: at 20 samples the default method puts p95 past the largest one
        quantiles = statistics.quantiles(latencies, n=20, method="inclusive")
        result = {
            "tree": str(Path(sysconfig.get_paths()["stdlib"])) + " (minus site-packages)",
            "files_indexed": table_counts["files"],
            "symbols": table_counts["symbols"],
            "imports": table_counts["imports"],
            "sidecar_mib": round(db_mib, 1),
            "build_s": round(stats.seconds, 2),
            "ctags_s": round(ctags_s, 2),
            "ctags_tags": ctags_tags,
            "build_over_ctags": round(stats.seconds / ctags_s, 1),
            "noop_rebuild_s": round(noop.seconds, 3),
            "ru_maxrss_growth_mib": round(rss_after - rss_before, 1),
            "ru_maxrss_mib": round(rss_after, 1),
            "tracemalloc_peak_mib": round(heap_peak, 1),
            "update_ms_p50": round(statistics.median(latencies), 2),
            "update_ms_p95": round(quantiles[18], 2),
            "update_ms_max": round(max(latencies), 2),
            "edits": args.edits,
            "locate_ms_p50": round(statistics.median(locate_ms), 3),
            "locate_ms_max": round(max(locate_ms), 3),
            "search_ms_p50": round(statistics.median(search_ms), 2),
            "search_ms_max": round(max(search_ms), 2),
            "machine": machine_info.machine(
                ctags=subprocess.run(
                    ["ctags", "--version"], capture_output=True, text=True, check=True
                ).stdout.split(",")[0],
                sqlite=sqlite3.sqlite_version,
            ),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
