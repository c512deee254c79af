"""Code index full build against ``ctags -R`` on real trees, and a seeded worktree index.

Each tree is copied to a temp dir first (``__pycache__`` left out) so both tools
read the same files from a warm page cache. Per tree, ``--reps`` rounds, each:
``ctags -R`` then a full build into a fresh sidecar; the figures are medians, and
the ratio is taken per round (both ran back to back under the same load) before
the median. CPU seconds are this process plus its children (the build's worker
processes; ctags). Prints one JSON object.

    .venv/bin/python benchmarks/code_index_bench.py [--reps 3] [--code DIR] [--trees ...]

``--code DIR`` imports ``backend`` from another checkout (e.g. ``git archive`` of an
older commit) to measure "before" with the same script. Seeding (``--seed``, needs
``seed_index_from``): the tree becomes a git repository, a worktree is added and
three files changed, one added and one deleted there; from scratch vs seeded.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_git import git_env  # benchmarks/bench_git.py, beside this script

HERE = Path(__file__).resolve().parent
SITE = Path(sysconfig.get_paths()["purelib"])
TREES = {
    "stdlib": Path(sysconfig.get_paths()["stdlib"]),
    "textual": SITE / "textual",
    "rich": SITE / "rich",
    "sylk": HERE.parent,
}


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def copy_tree(name: str, src: Path, dest: Path) -> Path:
    skip = ["__pycache__", ".git", ".venv", "site-packages", "node_modules", ".mypy_cache"]
    tree = dest / name
    shutil.copytree(src, tree, symlinks=True, ignore=shutil.ignore_patterns(*skip))
    return tree


def fresh(db: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args],
        cwd=cwd,
        env=git_env(),
        check=True,
        capture_output=True,
    )


def bench_tree(code_index: Any, tree: Path, work: Path, reps: int) -> dict[str, Any]:
    load_1m = os.getloadavg()[0]  # the machine is shared: say how busy it was
    rounds = []
    for rep in range(reps):
        tags = work / "tags"
        before = cpu_s()
        started = time.perf_counter()
        subprocess.run(["ctags", "-R", "-f", str(tags), str(tree)], check=True)
        ctags_s = time.perf_counter() - started
        ctags_cpu = cpu_s() - before
        index = code_index(tree, fresh(work / f"index{rep}.db"))
        before = cpu_s()
        started = time.perf_counter()
        stats = index.build()
        build_s = time.perf_counter() - started
        rounds.append((ctags_s, build_s, ctags_cpu, cpu_s() - before, stats.indexed))
        index.close()
    return {
        "load_1m": round(load_1m, 2),
        "files_indexed": rounds[0][4],
        "ctags_s": round(statistics.median(r[0] for r in rounds), 3),
        "build_s": round(statistics.median(r[1] for r in rounds), 3),
        "build_over_ctags": round(statistics.median(r[1] / r[0] for r in rounds), 2),
        "ratios": [round(r[1] / r[0], 2) for r in rounds],
        "ctags_cpu_s": round(statistics.median(r[2] for r in rounds), 3),
        "build_cpu_s": round(statistics.median(r[3] for r in rounds), 3),
    }


def bench_seed(code_index: Any, tree: Path, work: Path) -> dict[str, Any]:
    from backend.knowledge.code import seed_index_from
    from backend.knowledge.code.live import index_path_for

    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "base")
    data = work / "data"
    code_index(tree, index_path_for(data, tree)).build()
    wt = work / "worktree"
    started = time.perf_counter()
    git(tree, "worktree", "add", "-q", "-b", "session", str(wt))
    worktree_s = time.perf_counter() - started
    pys = sorted(p for p in wt.rglob("*.py") if p.stat().st_size > 2048)
    for path in pys[:3]:
        path.write_text(path.read_text(encoding="utf-8") + "\ndef bench_added():\n    pass\n")
    (wt / "bench_new.py").write_text("class BenchNew:\n    pass\n")
    pys[3].unlink()
    scratch = code_index(wt, fresh(work / "scratch.db"))
    started = time.perf_counter()
    scratch.build()
    scratch_s = time.perf_counter() - started
    scratch.close()
    stats = seed_index_from(tree, wt, data)
    return {
        "git_worktree_add_s": round(worktree_s, 3),
        "scratch_build_s": round(scratch_s, 3),
        "seeded_s": round(stats.seconds, 3),
        "seeded_over_scratch": round(stats.seconds / scratch_s, 3),
        "files": stats.files,
        "reparsed": len(stats.reindexed),
        "removed": stats.removed,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--code", type=Path, default=HERE.parent)
    parser.add_argument("--trees", nargs="+", default=list(TREES), choices=list(TREES))
    parser.add_argument("--seed", default="textual", help="tree for the seeding figure, or ''")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    sys.path.insert(1, str(HERE))
    import machine_info  # benchmarks/machine_info.py, beside this script

    from backend.knowledge.code.index import CodeIndex

    code = str(Path(sys.modules[CodeIndex.__module__].__file__ or "").parents[3])
    result: dict[str, Any] = {"code": code, "trees": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in args.trees:
            tree = copy_tree(name, TREES[name], work)
            result["trees"][name] = bench_tree(CodeIndex, tree, work, args.reps)
        if args.seed:
            seed_work = work / "seed"
            seed_work.mkdir()
            tree = copy_tree(args.seed, TREES[args.seed], seed_work)
            result["seed"] = {"tree": args.seed, **bench_seed(CodeIndex, tree, seed_work)}
    ctags = subprocess.run(["ctags", "--version"], capture_output=True, text=True, check=True)
    result["machine"] = machine_info.machine(ctags=ctags.stdout.split(",")[0])
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
