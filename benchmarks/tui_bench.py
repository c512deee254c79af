"""Benchmark: the Sylk TUI at scale, each figure against a baseline taken in the same run.

Figures (``--only NAME,...`` picks some; ``--quick`` takes every one smaller and faster):

- ``start``: spawn to the first full frame on a 120x40 pseudo-terminal, and to the
  working screen ("ready"), against a minimal Textual app; runs alternated.
- ``cli``: ``sylk run "/session list"`` and ``sylk run`` with a request the Guide routes
  (offline provider) (spawn to exit) against ``python -c`` opening the SQLite file and
  printing; ``sylk mcp serve`` (spawn to the ``initialize`` reply) against ``python -c``
  answering one JSON-RPC line. Overhead = the difference; the children's CPU time too.
- ``idle``: CPU share of one core and terminal bytes written per second while the app
  sits ready, against the minimal Textual app idle the same way.
- ``switch``: keypress to rendered over N ``alt+down`` switches across S sessions x M
  messages; RSS at the end over RSS at the start; full garbage collections meanwhile.
- ``stream``: frame time and event-loop lag while 20 sessions stream 1,000 lines a second
  in total (the app shows one of them).
- ``memory``: RSS after 100,000 transcript lines arrive in the session on screen.

Details of each in ``tui_bench_pty.py`` and ``tui_bench_live.py``. Prints one JSON object.

Usage: python benchmarks/tui_bench.py [--quick] [--only start,cli,idle,switch,stream,memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script
import tui_bench_live as live
import tui_bench_pty as term
from tui_switch_bench import build_archive

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SYLK_PROVIDER")
FIGURES = ("start", "cli", "idle", "switch", "stream", "memory")
READY_MARK = b"session 1"
"""On the working screen of a fresh data dir: the first session's name."""

FULL = {
    "runs": 7,
    "idle_s": 30.0,
    "sessions": 500,
    "messages": 200,
    "switches": 100,
    "stream_s": 10.0,
    "lines": 100_000,
}
QUICK = {
    "runs": 3,
    "idle_s": 5.0,
    "sessions": 60,
    "messages": 200,
    "switches": 30,
    "stream_s": 3.0,
    "lines": 20_000,
}


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    return {**env, "SYLK_CONFIG_DIR": str(config), "PYTHONPATH": str(ROOT)}


def _fresh(tmp: Path, name: str) -> tuple[Path, Path]:
    data, workspace = tmp / f"{name}-data", tmp / f"{name}-ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "main.py").write_text("print('hello')\n")
    return data, workspace


def _stats(values: list[float], baseline: list[float]) -> dict[str, Any]:
    mid, base = statistics.median(values), statistics.median(baseline)
    return {
        "median_ms": round(mid * 1000, 1),
        "min_ms": round(min(values) * 1000, 1),
        "baseline_median_ms": round(base * 1000, 1),
        "ratio": round(mid / base, 2),
        "overhead_ms": round((mid - base) * 1000, 1),
    }


def _frame_once(argv: list[str], env: dict[str, str], ready: bytes | None) -> dict[str, float]:
    run = term.spawn(argv, env)
    try:
        return term.first_frame(run, ready)
    finally:
        run.stop()


def start(tmp: Path, runs: int) -> dict[str, Any]:
    env = _env(tmp)
    samples: dict[str, list[float]] = {"sylk_first": [], "sylk_ready": [], "minimal": []}
    for n in range(runs + 1):  # the first round warms the caches, not measured
        data, workspace = _fresh(tmp, f"start{n}")
        sylk = _frame_once(term.sylk_argv(data, workspace), env, READY_MARK)
        minimal = _frame_once(term.minimal_argv(), env, None)
        if n:
            samples["sylk_first"].append(sylk["first_frame"])
            samples["sylk_ready"].append(sylk["ready"])
            samples["minimal"].append(minimal["first_frame"])
    return {
        "first_frame": _stats(samples["sylk_first"], samples["minimal"]),
        "ready": _stats(samples["sylk_ready"], samples["minimal"]),
        "baseline": "a minimal Textual app (one Static), its first frame",
    }


def _timed_with_cpu(measure: Callable[[], float]) -> tuple[float, float]:
    """Wall seconds as ``measure`` says, and the CPU seconds (user + system) the child
    used until it was reaped: steadier than wall time on a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = measure()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli(tmp: Path, runs: int) -> dict[str, Any]:
    env = _env(tmp)
    data, workspace = _fresh(tmp, "cli")
    run_argv = term.sylk_argv(data, workspace, "run", "/session list")
    # A request the Guide routes (its rule tables compile on the first route); the
    # offline provider answers it (exit 3), as with no key configured.
    routed_argv = term.sylk_argv(data, workspace, "run", "what changed in the router?")
    serve_argv = term.sylk_argv(data, workspace, "mcp", "serve")
    term.time_exit(run_argv, env)  # creates the archive the baseline reads
    database = next(data.glob("*.db"), None) or next(data.rglob("*.db"))
    measures: dict[str, Callable[[], float]] = {
        "run": lambda: term.time_exit(run_argv, env),
        "run_base": lambda: term.time_exit(term.baseline_list_argv(database), env),
        "routed": lambda: term.time_exit(routed_argv, {**env, "SYLK_PROVIDER": "offline"}),
        "serve": lambda: term.time_initialize(serve_argv, env),
        "serve_base": lambda: term.time_initialize(term.baseline_server_argv(), env),
    }
    wall: dict[str, list[float]] = {key: [] for key in measures}
    cpu: dict[str, list[float]] = {key: [] for key in measures}
    for n in range(runs + 1):
        for key, measure in measures.items():
            seconds, cpu_seconds = _timed_with_cpu(measure)
            if n:
                wall[key].append(seconds)
                cpu[key].append(cpu_seconds)

    def figure(key: str, base: str) -> dict[str, Any]:
        steadier = _stats(cpu[key], cpu[base])
        return {**_stats(wall[key], wall[base]),
                "cpu_median_ms": steadier["median_ms"],
                "cpu_overhead_ms": steadier["overhead_ms"]}  # fmt: skip

    return {
        "run": figure("run", "run_base"),
        "run_routed": figure("routed", "run_base"),
        "mcp_serve": figure("serve", "serve_base"),
        "baseline": "python -c: open the SQLite file and print (run); answer one "
        "JSON-RPC line (mcp serve). cpu_*: the child's user + system CPU to its exit "
        "(mcp serve: to its exit after stdin closes)",
    }


def idle(tmp: Path, window_s: float) -> dict[str, Any]:
    env = _env(tmp)
    data, workspace = _fresh(tmp, "idle")
    result: dict[str, Any] = {}
    for name, argv, ready in (
        ("sylk", term.sylk_argv(data, workspace), READY_MARK),
        ("minimal", term.minimal_argv(), None),
    ):
        run = term.spawn(argv, env)
        try:
            term.first_frame(run, ready)
            result[name] = term.idle_cpu(run, window_s, settle_s=3.0)
        finally:
            run.stop()
    result["aim_percent"] = 0.2
    return result


def switch(tmp: Path, sessions: int, messages: int, switches: int) -> dict[str, Any]:
    data, workspace = _fresh(tmp, "switch")
    started = time.perf_counter()
    asyncio.run(build_archive(data, workspace, sessions, messages))
    built = time.perf_counter() - started
    figures = asyncio.run(live.measure_switching(data, workspace, switches))
    return {
        "sessions": sessions,
        "messages_per_session": messages,
        "switches": switches,
        "archive_build_s": round(built, 1),
        **figures,
        "aim": "p95 < 50 ms, max < 100 ms, rss_ratio <= 1.2",
    }


def stream(tmp: Path, seconds: float) -> dict[str, Any]:
    data, workspace = _fresh(tmp, "stream")
    return asyncio.run(live.measure_streaming(data, workspace, 20, 1000, seconds))


def memory(tmp: Path, lines: int) -> dict[str, Any]:
    data, workspace = _fresh(tmp, "memory")
    return asyncio.run(live.measure_memory(data, workspace, lines))


IN_PROCESS = ("switch", "stream", "memory")
"""Taken in a fresh interpreter each, so one's heap does not weigh on the next's RSS."""


def _in_child(figure: str, quick: bool) -> Any:
    argv = [sys.executable, __file__, "--child", "--only", figure, *(["--quick"] if quick else [])]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{figure} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller and faster runs")
    parser.add_argument("--only", default=",".join(FIGURES), help="figures to take")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    wanted = [name for name in args.only.split(",") if name]
    unknown = sorted(set(wanted) - set(FIGURES))
    if unknown:
        parser.error(f"unknown figures {unknown}; choose from {', '.join(FIGURES)}")
    size = QUICK if args.quick else FULL
    for name in PROVIDER_ENV:
        os.environ.pop(name, None)
    os.environ["SYLK_SEMANTIC"] = "off"
    report: dict[str, Any] = {"benchmark": "tui", "quick": args.quick, "sizes": size}
    with tempfile.TemporaryDirectory(prefix="sylk-tui-bench-") as name:
        tmp = Path(name)
        takers = {
            "start": lambda: start(tmp, int(size["runs"])),
            "cli": lambda: cli(tmp, int(size["runs"])),
            "idle": lambda: idle(tmp, float(size["idle_s"])),
            "switch": lambda: switch(
                tmp, int(size["sessions"]), int(size["messages"]), int(size["switches"])
            ),
            "stream": lambda: stream(tmp, float(size["stream_s"])),
            "memory": lambda: memory(tmp, int(size["lines"])),
        }
        for figure in wanted:
            if figure in IN_PROCESS and not args.child:
                report[figure] = _in_child(figure, args.quick)
            else:
                report[figure] = takers[figure]()
            if args.child:
                print(json.dumps(report[figure]))
                return
            print(f"{figure}: {json.dumps(report[figure])}", file=sys.stderr, flush=True)
    import textual

    report["machine"] = machine_info.machine(textual=textual.__version__)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
