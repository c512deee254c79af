"""Benchmark: ``sylk run`` and ``sylk mcp serve`` start-up, this tree against another
checkout (an older commit), runs alternated so both see the same machine load.

``tui_bench.py --only cli`` takes one tree against ``python -c``; on a machine others load
its figures move by seconds between runs, so comparing two of its runs says little. Here
each round runs, in turn: ``python -c`` (the baseline of ``tui_bench``), the older tree,
this tree, for both commands; each run's wall time and its CPU time (user + system, from
the kernel's accounting of the child, which load inflates far less than wall time).

- ``run``: ``sylk run --json "hi"`` on a fresh data dir's first session (the offline
  default: the Guide answers), spawn to exit.
- ``serve``: ``sylk mcp serve`` (stdio), spawn to the reply to ``initialize``.

Both trees are byte-compiled first (``compileall``): a fresh worktree has no
``__pycache__``, and where ``PYTHONDONTWRITEBYTECODE`` is set it never gets one, so every
start would compile each module again (a third of the time, and not what users run).

Usage: python benchmarks/tui_bench_versus.py --before DIR [--rounds 7]
(make DIR with ``git worktree add DIR COMMIT``). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script
import tui_bench_pty as term

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("backend", "sylk_tui", "screens", "widgets", "themes")
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SYLK_PROVIDER")
Timed = tuple[float, float]
"""(wall seconds, CPU seconds of the child)."""


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(
    run: Callable[[list[str], dict[str, str], Path], float],
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
) -> Timed:
    """``run`` spawns one child and waits for it; its CPU is the children's delta."""
    before = _children_cpu()
    wall = run(argv, env, cwd)
    return wall, _children_cpu() - before


def _run_exit(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    return term.time_exit(argv, env, cwd)


def _run_initialize(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    return term.time_initialize(argv, env, cwd, wait_s=30.0)


def _env(tree: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    return {**env, "SYLK_CONFIG_DIR": str(config), "PYTHONPATH": str(tree), "SYLK_SEMANTIC": "off"}


def _summary(samples: dict[str, list[Timed]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, values in samples.items():
        out[name] = {
            "wall_median_ms": round(statistics.median(v[0] for v in values) * 1000, 1),
            "cpu_median_ms": round(statistics.median(v[1] for v in values) * 1000, 1),
        }
    for command in ("run", "serve"):
        base, before, after = (out[f"{command}_{k}"] for k in ("baseline", "before", "after"))
        out[f"{command}_ratios"] = {
            "after_over_before_wall": round(after["wall_median_ms"] / before["wall_median_ms"], 2),
            "after_over_before_cpu": round(after["cpu_median_ms"] / before["cpu_median_ms"], 2),
            "before_overhead_cpu_ms": round(before["cpu_median_ms"] - base["cpu_median_ms"], 1),
            "after_overhead_cpu_ms": round(after["cpu_median_ms"] - base["cpu_median_ms"], 1),
        }
    return out


def _byte_compile(tree: Path) -> None:
    folders = [str(tree / name) for name in PACKAGES if (tree / name).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def compare(before: Path, rounds: int) -> dict[str, Any]:
    trees = {"before": before.resolve(), "after": ROOT}
    for tree in trees.values():
        _byte_compile(tree)
    samples: dict[str, list[Timed]] = {
        f"{c}_{k}": [] for c in ("run", "serve") for k in ("baseline", "before", "after")
    }
    with tempfile.TemporaryDirectory(prefix="sylk-versus-") as name:
        tmp = Path(name)
        dirs = {k: (tmp / f"{k}-data", tmp / f"{k}-ws") for k in trees}
        for _, workspace in dirs.values():
            workspace.mkdir(parents=True)
            (workspace / "main.py").write_text("print('hello')\n")
        env = {k: _env(tree, tmp) for k, tree in trees.items()}
        for n in range(rounds + 1):  # the first round warms the caches, not kept
            timed: dict[str, Timed] = {}
            database = dirs["after"][0] / "sylk.db"
            if n:  # the archive exists after the warm-up round
                listing = term.baseline_list_argv(database)
                timed["run_baseline"] = _timed(_run_exit, listing, env["after"], ROOT)
                echo = term.baseline_server_argv()
                timed["serve_baseline"] = _timed(_run_initialize, echo, env["after"], ROOT)
            for key, tree in trees.items():
                data, workspace = dirs[key]
                run = term.sylk_argv(data, workspace, "run", "--json", "hi")
                serve = term.sylk_argv(data, workspace, "mcp", "serve")
                timed[f"run_{key}"] = _timed(_run_exit, run, env[key], tree)
                timed[f"serve_{key}"] = _timed(_run_initialize, serve, env[key], tree)
            if n:
                for key, value in timed.items():
                    samples[key].append(value)
            print(f"round {n}: {json.dumps(timed)}", file=sys.stderr, flush=True)
    return _summary(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the older checkout")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    report: dict[str, Any] = {"benchmark": "tui_versus", "before": str(args.before)}
    report.update(compare(args.before, args.rounds))
    report["machine"] = machine_info.machine()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
