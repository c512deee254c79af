"""Benchmark: Sylk beside its peers (issue 16), each on a 120x40 pseudo-terminal.

Subjects, in alternation round by round: Sylk (``SYLK_SEMANTIC=off``, a fresh data dir,
no provider keys: the offline default), a minimal Textual app (one Static), and each peer
found installed outside the project: Claude Code, Codex and opencode from npm
(``--npm-prefix``), aider from its own virtualenv (``--aider``). No API key exists; each
shows whatever it shows first without one. Claude Code is run twice: with a fresh HOME
(its onboarding, which checks the network and exits without it) and with a HOME holding
only ``~/.claude.json`` saying onboarding is done (a returning user's start).

Each run gets a fresh HOME (``<homes>/home-N``) and a fresh git workspace holding one
file, so no state carries over and no peer starts in this repository. Figures, see
``peers_pty.py`` for what a frame is:

- first frame: spawn to the end of the first burst of writes showing text; "at rest":
  to the last write before half a second without one (``--runs`` alternated rounds);
- RSS of the whole process tree (wrappers start the real program) 5 s after spawn;
- idle CPU of the whole tree over ``--idle-s`` seconds from 8 s after spawn (or 3 s
  after its screen came to rest if later), as a share of one core (``--idle-rounds``
  alternated rounds; the figure is their median), and the tree's RSS at the window's end.

The 1-minute load is recorded with every run. Prints one JSON object.

Usage: python benchmarks/peers_bench.py [--runs 5] [--idle-s 30] [--idle-rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script
import peers_pty
import tui_bench_pty as term

ROOT = Path(__file__).resolve().parents[1]
RSS_AT_S = 5.0
IDLE_FROM_S = 8.0
SETTLE_S = 3.0
DEADLINE_S = 20.0
Argv = Callable[[Path, Path], list[str]]
"""(HOME, workspace) -> the command line."""


def _sylk(home: Path, workspace: Path) -> list[str]:
    return term.sylk_argv(home / "sylk-data", workspace)


def subjects(npm: Path, aider: Path) -> dict[str, Argv]:
    """What to run, by name; a peer not installed is left out (and said so in the JSON)."""
    found: dict[str, Argv] = {
        "sylk": _sylk,
        "minimal_textual": lambda home, ws: term.minimal_argv(),
    }
    bins = npm / "node_modules" / ".bin"
    if (bins / "claude").exists():
        found["claude_code"] = lambda home, ws: [str(bins / "claude")]
        found["claude_code_onboarded"] = lambda home, ws: [str(bins / "claude")]
    if (bins / "codex").exists():
        found["codex"] = lambda home, ws: [str(bins / "codex")]
    if (bins / "opencode").exists():
        found["opencode"] = lambda home, ws: [str(bins / "opencode")]
    if aider.exists():
        found["aider"] = lambda home, ws: [str(aider)]
    return found


def versions(npm: Path, aider: Path) -> dict[str, str]:
    """Each installed peer's version as its package says (no peer is started for it)."""
    out: dict[str, str] = {}
    for name, package in (
        ("claude_code", "@anthropic-ai/claude-code"),
        ("codex", "@openai/codex"),
        ("opencode", "opencode-ai"),
    ):
        manifest = npm / "node_modules" / package / "package.json"
        if manifest.exists():
            out[name] = json.loads(manifest.read_text())["version"]
    pip = aider.parent / "pip"
    if pip.exists():
        shown = subprocess.run(
            [str(pip), "show", "aider-chat"], capture_output=True, text=True, check=False
        ).stdout
        out["aider"] = next(
            (line.split()[-1] for line in shown.splitlines() if line.startswith("Version")), "?"
        )
    out["node"] = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return out


def _fresh(homes: Path, serial: int, name: str) -> tuple[Path, Path, dict[str, str]]:
    """A fresh HOME and git workspace, and the environment: no keys, no proxies."""
    home = homes / f"home-{serial}"
    if home.exists():
        shutil.rmtree(home)
    workspace = home / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "main.py").write_text("print('hello')\n")
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.invalid\n")
    git = ["git", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q"], check=True, env={**os.environ, "HOME": str(home)})
    subprocess.run([*git, "add", "main.py"], check=True)
    subprocess.run(
        [*git, "commit", "-qm", "start"], check=True, env={**os.environ, "HOME": str(home)}
    )
    if name == "claude_code_onboarded":
        (home / ".claude.json").write_text('{"hasCompletedOnboarding": true}\n')
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "USER": os.environ.get("USER", "root"),
    }
    if name in ("sylk", "minimal_textual"):
        config = home / "sylk-config"
        config.mkdir()
        env |= {"SYLK_CONFIG_DIR": str(config), "PYTHONPATH": str(ROOT), "SYLK_SEMANTIC": "off"}
    return home, workspace, env


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def frame_run(argv: list[str], env: dict[str, str], workspace: Path) -> dict[str, Any]:
    """First frame, at rest, what it showed, and the tree's RSS at 5 s (None: it exited)."""
    load = _load()
    run = peers_pty.spawn(argv, env, workspace)
    try:
        figures = peers_pty.first_frame(run, DEADLINE_S)
        while time.perf_counter() - run.started < RSS_AT_S and run.read(0.05):
            pass
        alive = run.alive(grace_s=0.5)
        figures["rss_mib_at_5s"] = run.tree_rss_mib() if alive else None
        figures["exited"] = not alive
    finally:
        run.stop()
    return {**figures, "load_1m": load}


def idle_run(argv: list[str], env: dict[str, str], workspace: Path, window_s: float) -> Any:
    """Share of one core the tree used over ``window_s``, from 8 s after spawn or 3 s
    after its screen came to rest, whichever is later."""
    load = _load()
    run = peers_pty.spawn(argv, env, workspace)
    try:
        rest = peers_pty.first_frame(run, DEADLINE_S)["at_rest_s"]
        quiet_from = max(IDLE_FROM_S, (rest if isinstance(rest, float) else 0.0) + SETTLE_S)
        while time.perf_counter() - run.started < quiet_from and run.read(0.05):
            pass
        if not run.alive(grace_s=0.5):
            return {"cpu_percent_of_core": None, "exited": True, "load_1m": load}
        cpu_before, started = run.tree_cpu_seconds(), time.perf_counter()
        written_before = len(run.seen)
        while time.perf_counter() - started < window_s and run.read(0.05):
            pass
        elapsed = time.perf_counter() - started
        used = max(run.tree_cpu_seconds() - cpu_before, 0.0)
        return {
            "cpu_percent_of_core": round(100 * used / elapsed, 3),
            "bytes_written_per_s": round((len(run.seen) - written_before) / elapsed, 1),
            "window_s": round(elapsed, 1),
            "from_s": round(started - run.started, 1),
            "processes": len(run.tree()),
            "rss_mib_after": run.tree_rss_mib(),
            "load_1m": load,
        }
    finally:
        run.stop()


def _median(values: list[float | None]) -> float | None:
    taken = [v for v in values if v is not None]
    return round(statistics.median(taken), 3) if taken else None


def summary(runs: list[dict[str, Any]], idles: list[dict[str, Any]]) -> dict[str, Any]:
    frames = [r["first_frame_s"] for r in runs]
    return {
        "first_frame_s": _median(frames),
        "first_frame_min_s": min((f for f in frames if f is not None), default=None),
        "at_rest_s": _median([r["at_rest_s"] for r in runs]),
        "rss_mib_at_5s": _median([r["rss_mib_at_5s"] for r in runs]),
        "idle_cpu_percent": _median([i["cpu_percent_of_core"] for i in idles]),
        "rss_mib_after_idle": _median([i.get("rss_mib_after") for i in idles]),
        "exited_early": sum(r["exited"] for r in runs),
        "shown": runs[-1]["shown"] if runs else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-s", type=float, default=30.0)
    parser.add_argument("--idle-rounds", type=int, default=1)
    parser.add_argument("--npm-prefix", type=Path, default=Path("/tmp/peers/npm"))
    parser.add_argument("--aider", type=Path, default=Path("/tmp/peers/venv/bin/aider"))
    parser.add_argument("--homes", type=Path, default=None, help="default: a temporary dir")
    parser.add_argument("--only", default="", help="comma-separated subjects")
    args = parser.parse_args()
    found = subjects(args.npm_prefix, args.aider)
    if args.only:
        found = {k: v for k, v in found.items() if k in args.only.split(",")}
    packages = ("backend", "sylk_tui", "screens", "widgets", "themes")
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], cwd=ROOT, check=False)
    homes = args.homes or Path(tempfile.mkdtemp(prefix="peers-"))
    serial = 0
    frames: dict[str, list[dict[str, Any]]] = {name: [] for name in found}
    idles: dict[str, list[dict[str, Any]]] = {name: [] for name in found}
    for round_ in range(args.runs + 1):  # round 0 warms the caches, not kept
        for name, argv in found.items():
            serial += 1
            home, workspace, env = _fresh(homes, serial, name)
            result = frame_run(argv(home, workspace), env, workspace)
            if round_:
                frames[name].append(result)
            print(f"{round_} {name}: {json.dumps(result)}", file=sys.stderr, flush=True)
    for _ in range(args.idle_rounds):
        for name, argv in found.items():
            serial += 1
            home, workspace, env = _fresh(homes, serial, name)
            idle = idle_run(argv(home, workspace), env, workspace, args.idle_s)
            idles[name].append(idle)
            print(f"idle {name}: {json.dumps(idle)}", file=sys.stderr, flush=True)
    results = {name: summary(frames[name], idles[name]) for name in found}
    base = results.get("sylk", {})
    for figures in results.values():
        for key in ("first_frame_s", "rss_mib_at_5s", "idle_cpu_percent"):
            mine, sylk = figures.get(key), base.get(key)
            figures[f"{key}_vs_sylk"] = round(mine / sylk, 2) if mine and sylk else None
    report = {
        "benchmark": "peers",
        "runs": args.runs,
        "idle_s": args.idle_s,
        "terminal": f"{term.COLUMNS}x{term.LINES} pty, TERM=xterm-256color",
        "results": results,
        "runs_detail": frames,
        "idle_detail": idles,
        "versions": versions(args.npm_prefix, args.aider),
        "machine": machine_info.machine(),
    }
    if args.homes is None:
        shutil.rmtree(homes, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
