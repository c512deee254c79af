"""What the sandbox costs per command: the sandboxed runner against a bare spawn.

Times, in the same run and alternating side by side, each of

- ``true``;
- ``python -c pass`` (this interpreter);
- ``python -m pytest -q`` on a small generated repository (a git repo, ``--tests``
  tests in a few files),

through :func:`backend.sandbox.run_sandboxed` (at each ``--level``, default: every
level this machine gives) and through a bare ``asyncio.create_subprocess_exec`` of
the same argv with pipes read to the end. Prints one JSON object: medians in ms per
command and side, the ratio sandboxed/bare, the sandbox support and the machine.

    .venv/bin/python benchmarks/sandbox_bench.py [--reps 15] [--tests 12] [--level full]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.sandbox import SandboxLevel, run_sandboxed, sandbox_support
from backend.sandbox.support import LEVELS


def _repo(root: Path, tests: int) -> Path:
    """A small project: a module, ``tests`` tests in four files, committed to git."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    for f in range(4):
        body = ["import sys", "sys.path.insert(0, 'src')", "from calc import add", ""]
        for n in range(f, tests, 4):
            body += [f"def test_add_{n}():", f"    assert add({n}, 1) == {n + 1}", ""]
        (root / "tests" / f"test_calc_{f}.py").write_text("\n".join(body))
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "bench"]):
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True
        )
    return root


async def _bare(argv: list[str], cwd: Path) -> int:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    await proc.communicate()
    return proc.returncode or 0


async def _sandboxed(argv: list[str], cwd: Path, level: SandboxLevel) -> int:
    run = await run_sandboxed(argv, cwd=cwd, workspace=cwd, timeout_s=300, level=level)
    return run.exit_code


async def _time(call: object) -> float:
    start = time.perf_counter()
    code = await call  # type: ignore[misc]
    elapsed = (time.perf_counter() - start) * 1000.0
    if code != 0:
        raise SystemExit(f"a benchmarked command failed (exit {code})")
    return elapsed


async def main(reps: int, tests: int, levels: list[SandboxLevel]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="sylk-sandbox-bench-") as tmp:
        repo = _repo(Path(tmp) / "repo", tests)
        commands = {
            "true": ["true"],
            "python -c pass": [sys.executable, "-c", "pass"],
            "pytest -q": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        }
        figures: dict[str, object] = {}
        for name, argv in commands.items():
            samples: dict[str, list[float]] = {"bare": [], **{lv: [] for lv in levels}}
            await _time(_bare(argv, repo))  # warm the page cache, unmeasured
            for _ in range(reps):
                samples["bare"].append(await _time(_bare(argv, repo)))
                for lv in levels:
                    samples[lv].append(await _time(_sandboxed(argv, repo, lv)))
            bare = statistics.median(samples["bare"])
            row: dict[str, object] = {"bare_ms": round(bare, 1)}
            for lv in levels:
                median = statistics.median(samples[lv])
                row[f"{lv}_ms"] = round(median, 1)
                row[f"{lv}_ratio"] = round(median / bare, 3)
                row[f"{lv}_overhead_ms"] = round(median - bare, 1)
            figures[name] = row
    support = sandbox_support()
    return {
        "benchmark": "sandbox",
        "reps": reps,
        "tests_in_repo": tests,
        "sandbox": {"best": support.level, "landlock_abi": support.landlock_abi},
        "commands": figures,
        "machine": machine_info.machine(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--tests", type=int, default=12)
    parser.add_argument("--level", action="append", choices=LEVELS)
    args = parser.parse_args()
    best = sandbox_support().level
    chosen = args.level or [lv for lv in LEVELS if LEVELS.index(lv) <= LEVELS.index(best)]
    print(json.dumps(asyncio.run(main(args.reps, args.tests, chosen)), indent=2))
