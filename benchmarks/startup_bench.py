"""Benchmark: how long Sylk takes to start, against baselines measured in the same run.

Every figure is a fresh process timed from spawn, after one unmeasured warm-up of
each kind (the OS file cache and bytecode caches are warm, as for a user's second
start). Kinds, alternated run by run so that machine load falls on all alike:

- ``import``: ``python -c "import sylk_tui.app"`` (everything the TUI imports
  before its first frame), against ``python -c "import textual.app"``.
- ``first_frame``: ``SylkApp`` started as ``sylk`` starts it, headless at 120x40 on
  an empty archive, from spawn to the first frame composed, against a minimal
  Textual app (one Static); ``ready``: to the first frame showing the sessions.
- ``run``: ``python -m sylk_tui run "/session list"`` (``sylk run``: the engine
  built, one request answered, the engine closed), against ``python -c pass``.

``--root DIR`` times another checkout of Sylk (e.g. an older commit in a git
worktree) with the same interpreter, so two trees can be compared in one run:
``--root A --root B`` alternates them too.

Usage: python benchmarks/startup_bench.py [--runs 7] [--root DIR ...]. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import machine_info  # benchmarks/machine_info.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SYLK_PROVIDER")
SIZE = (120, 40)

FRAME_CHILD = """
import sys
from pathlib import Path
kind, data_dir, workspace = sys.argv[1:4]
if kind == "minimal":
    from textual.app import App
    from textual.widgets import Static

    class Minimal(App[None]):
        def compose(self):
            yield Static("Hello from a minimal Textual app")

    app = Minimal()
else:
    from sylk_tui.app import SylkApp

    def build():
        from backend.engine import Engine, EngineConfig

        return Engine(EngineConfig(data_dir=Path(data_dir), workspace=Path(workspace)))

    # As `sylk` starts it: a tree whose app builds its engine after the first frame
    # is handed the function; an older one the engine.
    app = SylkApp(build if hasattr(SylkApp, "startup_error") else build())
plain_display = app._display
seen = set()

def display(screen, renderable):
    plain_display(screen, renderable)
    if renderable is None:
        return
    if "FIRST" not in seen:
        seen.add("FIRST")
        print("FIRST", flush=True)
    if kind == "minimal":
        app.exit()
        return
    listed = app.screen.query("#session-list")
    if listed and listed.first().sessions and "READY" not in seen:
        seen.add("READY")  # the sessions are on screen: the user can work
        print("READY", flush=True)
        app.exit()

app._display = display
app.run(headless=True, size=(120, 40))
"""


def _time(command: list[str], cwd: Path, env: dict[str, str], mark: str | None) -> float:
    """Milliseconds from spawn to ``mark`` on stdout (or to exit when ``mark`` is None)."""
    started = time.perf_counter()
    with subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        seen = None
        for line in proc.stdout:
            if mark is not None and line.strip() == mark and seen is None:
                seen = (time.perf_counter() - started) * 1000
        err = proc.stderr.read() if proc.stderr else ""
    ended = (time.perf_counter() - started) * 1000
    if mark is not None and seen is None:
        raise RuntimeError(f"{command} printed no {mark}: {err[-500:]}")
    if mark is None and proc.returncode not in (0, 3):  # 3: offline, which is expected
        raise RuntimeError(f"{command} exited {proc.returncode}: {err[-500:]}")
    return seen if seen is not None else ended


def commands(data: Path, workspace: Path) -> dict[str, tuple[list[str], str | None]]:
    py = sys.executable
    where = ["--data-dir", str(data), "--workspace", str(workspace)]
    return {
        "import": ([py, "-c", "import sylk_tui.app"], None),
        "first_frame": ([py, "-c", FRAME_CHILD, "sylk", str(data), str(workspace)], "FIRST"),
        "ready": ([py, "-c", FRAME_CHILD, "sylk", str(data), str(workspace)], "READY"),
        "run": ([py, "-m", "sylk_tui", *where, "run", "/session list"], None),
    }


BASELINES: dict[str, tuple[list[str], str | None]] = {
    "import": ([sys.executable, "-c", "import textual.app"], None),
    "first_frame": ([sys.executable, "-c", FRAME_CHILD, "minimal", "-", "-"], "FIRST"),
    "ready": ([sys.executable, "-c", FRAME_CHILD, "minimal", "-", "-"], "FIRST"),
    "run": ([sys.executable, "-c", "pass"], None),
}


def measure(roots: list[Path], runs: int) -> dict[str, Any]:
    base_env = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    samples: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="sylk-startup-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        (workspace / "main.py").write_text("print('hello')\n")
        plans: list[tuple[str, str, list[str], str | None, Path, dict[str, str]]] = []
        for kind, (command, mark) in BASELINES.items():
            plans.append(("baseline", kind, command, mark, ROOT, base_env))
        for index, root in enumerate(roots):
            data = Path(tmp) / f"data{index}"
            env = {**base_env, "PYTHONPATH": str(root), "SYLK_DATA_DIR": str(data)}
            label = str(root)
            for kind, (command, mark) in commands(data, workspace).items():
                plans.append((label, kind, command, mark, root, env))
        for _, _, command, mark, cwd, env in plans:  # warm-up, not measured
            _time(command, cwd, env, mark)
        for _ in range(runs):
            for label, kind, command, mark, cwd, env in plans:
                samples.setdefault(label, {}).setdefault(kind, []).append(
                    _time(command, cwd, env, mark)
                )
    result: dict[str, Any] = {}
    baseline = {k: statistics.median(v) for k, v in samples["baseline"].items()}
    for label, kinds in samples.items():
        result[label] = {
            kind: {
                "median_ms": round(statistics.median(v), 1),
                "min_ms": round(min(v), 1),
                "ratio_to_baseline": round(statistics.median(v) / baseline[kind], 2),
            }
            for kind, v in kinds.items()
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--root", action="append", type=Path, help="a Sylk checkout to time")
    args = parser.parse_args()
    roots = [r.resolve() for r in (args.root or [ROOT])]
    import textual

    report = {
        "benchmark": "startup",
        "runs": args.runs,
        "baseline": {
            "import": "python -c 'import textual.app'",
            "first_frame": "a minimal Textual app (one Static), headless 120x40",
            "ready": "the same minimal app's first frame",
            "run": "python -c pass",
        },
        "results": measure(roots, args.runs),
        "machine": machine_info.machine(textual=textual.__version__),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
