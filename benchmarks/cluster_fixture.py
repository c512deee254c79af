"""What the cluster benchmark runs on: a tiny Python project, the scripted turns of its
plans, and the costs measured alone that the benchmark subtracts or cites.

The project is a git repository with one module and one test per pipeline
(``pkg/m<s>_<i>.py``, ``tests/test_m<s>_<i>.py``), a ``pyproject.toml`` naming ruff and
pytest, so the pipeline's inspector runs Sylk's own ruff and its tester a real
``pytest -q`` on the one relevant test. Each pipeline's engineer rewrites its module
(three scripted model turns: read it, edit it, say so; each waits ``latency`` seconds
first, as a model would take to answer).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_git import GIT_ENV  # benchmarks/bench_git.py, beside this module

VENV_BIN = str(Path(sys.executable).parent)
PYPROJECT = """\
[project]
name = "fx"
version = "0"

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
pythonpath = ["."]
"""


def tools_env() -> None:
    """Sylk's own ruff and pytest first on PATH (what discovery finds), here and in every
    process started from here (Ray's head and workers too); semantic search off."""
    os.environ["PATH"] = os.pathsep.join([VENV_BIN, os.environ.get("PATH", os.defpath)])
    os.environ["SYLK_SEMANTIC"] = "off"
    os.environ.update(GIT_ENV)


def module_name(s: int, i: int) -> str:
    return f"m{s}_{i}"


def make_project(root: Path, sessions: int, nodes: int) -> Path:
    """The fixture repository, one commit on ``main``."""
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    # No .gitignore: what the checks leave (bytecode, caches) never travels with a
    # pipeline's result whatever the repository ignores (git_handoff.LEFTOVERS).
    (root / "pkg" / "__init__.py").write_text("")
    for s in range(sessions):
        for i in range(nodes):
            name = module_name(s, i)
            (root / "pkg" / f"{name}.py").write_text(f"VALUE = {i}\n")
            (root / "tests" / f"test_{name}.py").write_text(
                f"from pkg.{name} import VALUE\n\n\ndef test_value() -> None:\n"
                "    assert VALUE >= 0\n"
            )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


TURNS = 3  # model turns of each pipeline's engineer, each a simulated latency


def _execute(op: str, **args: Any) -> dict[str, Any]:
    return {"name": "execute", "arguments": {"op": op, "args": args, "dry_run": False}}


def script_for(sessions: int, nodes: int, latency: float) -> dict[str, Any]:
    """Each session's Architect proposes plan p<s> of ``nodes`` independent engineer
    nodes; each node's thread: read its module, edit it, say so (``TURNS`` turns, each
    after ``latency``)."""
    turns: list[dict[str, Any]] = []
    threads: dict[str, Any] = {}
    for s in range(sessions):
        made = [
            {"id": f"n{i}", "agent": "engineer", "depends_on": [],
             "prompt": f"raise VALUE in pkg/{module_name(s, i)}.py"}
            for i in range(nodes)
        ]  # fmt: skip
        doc = {"id": f"p{s}", "prompt": "a cluster benchmark plan", "nodes": made}
        turns += [{"tool_calls": [_execute("architect.plan.create", plan=doc)]}, {"text": "Ok."}]
        for i in range(nodes):
            path = f"pkg/{module_name(s, i)}.py"
            read = _execute("engineer.file.read", path=path)
            edit = _execute("engineer.file.edit", path=path, old_content=f"VALUE = {i}\n",
                            new_content=f"VALUE = {1000 + i}\n")  # fmt: skip
            threads[f"s{s}n{i}"] = {
                "match": f"Task n{i} of plan p{s}:",
                "turns": [
                    {"pause_s": latency, "text": "Reading.", "tool_calls": [read]},
                    {"pause_s": latency, "text": "Editing.", "tool_calls": [edit]},
                    {"pause_s": latency, "text": f"Raised VALUE in {path}."},
                ],
            }
    return {"turns": turns, "threads": threads}


def _median_ms(argv: list[str], cwd: Path, rounds: int) -> float:
    runs: list[float] = []
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
        runs.append(time.perf_counter() - t)
    return round(statistics.median(runs) * 1000, 1)


def checks_alone(project: Path, rounds: int = 5) -> dict[str, float]:
    """The tester's ``pytest -q`` on one test file and the inspector's ruff on one module,
    run directly (no sandbox), median of ``rounds``: what a pipeline spends in them."""
    name = module_name(0, 0)
    return {
        "pytest_one_test_ms": _median_ms(
            ["pytest", "-q", "-p", "no:cacheprovider", f"tests/test_{name}.py"], project, rounds
        ),
        "ruff_check_one_file_ms": _median_ms(
            ["ruff", "check", "--no-cache", f"pkg/{name}.py"], project, rounds
        ),
    }


async def handoff_alone(project: Path, rounds: int) -> dict[str, float]:
    """The Ray path's git handoff, each step alone on the fixture project (median ms):
    snapshot the tree to a base ref, fetch it into a fresh checkout, commit and push the
    result back, apply base..result to the tree."""
    from backend.cluster import git_handoff as gh

    repo = gh.session_repository(project)
    times: dict[str, list[float]] = {"snapshot": [], "fetch": [], "push": [], "apply": []}
    with tempfile.TemporaryDirectory(prefix="sylk-handoff-") as scratch:
        for r in range(rounds):
            t = time.perf_counter()
            base = await gh.snapshot_base(repo, f"refs/sylk/base/bench/{r}")
            times["snapshot"].append(time.perf_counter() - t)
            checkout = Path(scratch) / str(r)
            t = time.perf_counter()
            await gh.fetch_checkout(project, f"refs/sylk/base/bench/{r}", checkout)
            times["fetch"].append(time.perf_counter() - t)
            (checkout / "pkg" / f"{module_name(0, 0)}.py").write_text(f"VALUE = {r + 5000}\n")
            t = time.perf_counter()
            sha = await gh.commit_and_push(checkout, "bench", project, f"refs/sylk/bench/{r}")
            times["push"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await gh.apply_result(repo, base, sha, f"refs/sylk/applied/bench/{r}")
            times["apply"].append(time.perf_counter() - t)
    return {f"{k}_ms": round(statistics.median(v) * 1000, 1) for k, v in times.items()}


def handoff_alone_sync(project: Path, rounds: int) -> dict[str, float]:
    return asyncio.run(handoff_alone(project, rounds))


def _processes() -> dict[int, list[str]]:
    """Every live process's ``/proc/<pid>/stat`` fields after its name (ppid first)."""
    table: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                table[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
    return table


def _descendants(root: int) -> dict[int, list[str]]:
    table = _processes()
    parents = {pid: int(fields[1]) for pid, fields in table.items()}

    def below(pid: int) -> bool:
        for _ in range(64):
            pid = parents.get(pid, 0)
            if pid == root:
                return True
            if pid <= 1:
                return False
        return False

    return {pid: fields for pid, fields in table.items() if below(pid)}


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of every live descendant of ``pid`` (their own and their reaped
    children's): what Ray's head and workers spent, read from ``/proc``."""
    tick = os.sysconf("SC_CLK_TCK")
    return sum(sum(int(x) for x in f[11:15]) / tick for f in _descendants(pid).values())


def tree_rss_mb(pid: int) -> float:
    """Resident set of every live descendant of ``pid`` (MB; shared pages counted twice)."""
    kb = sum(_rss_kb(Path(f"/proc/{p}/status")) for p in _descendants(pid))
    return round(kb / 1024, 1)


def ray_worker_rss_mb(pid: int) -> list[float]:
    """Resident set of each live Ray worker process below ``pid`` (``ray::…`` titles)."""
    found: list[float] = []
    for p in _descendants(pid):
        try:
            title = Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::"):
            found.append(round(_rss_kb(Path(f"/proc/{p}/status")) / 1024, 1))
    return sorted(found)


def _rss_kb(status: Path) -> int:
    try:
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_now_mb() -> float:
    return round(_rss_kb(Path("/proc/self/status")) / 1024, 1)
