"""Many sessions at once on one repository, each running a plan of engineer pipelines.

S sessions (default 50) are made in one git repository, each isolated in its own
worktree; each gets an approved plan of K independent engineer nodes (default 10), so
the shared worker pool, not the plan, decides what runs when. Every node is a whole
engineer pipeline (engineer -> inspector -> tester) through the real engine: the
scripted model waits ``--latency`` seconds before each of its two answers (one writes a
file with ``engineer.file.write``, a path of its session's own or, with ``--same-files``,
the same path in every session; one says it is done), checkpoints go to the shadow git
repository, records to SQLite. Each figure is measured against its baseline in the
same process:

- fairness: each session's throughput (its nodes / the time its DAG finished, from the
  moment the first plan was approved, and again from its own approval, as the approvals
  go in one after the other), min / median / max and coefficient of variation,
  against the same job shapes (K jobs per session, each holding a worker for the two
  model latencies) under the ``WorkerPool`` and under a bare ``asyncio.Semaphore``;
- scheduler overhead: wall and CPU time per acquire and release of ``WorkerPool``
  against ``asyncio.Semaphore`` for S x K engineer jobs that only yield, sides alternating
  round by round (medians);
- worktree creation: ``SessionWorktrees.create`` against one ``git worktree add -b``
  (run the same hooks-off way) on the same repository, alternating, median of N; and the
  engine's own ``create_session(isolation=True)`` (worktree plus the session's records);
- memory: ``ru_maxrss`` after start-up and after the engine run (this process's peak),
  of the largest child; and the resident set once the engine is built, once the sessions
  are made and when every plan is done (what the sessions themselves add; the embedding
  model of semantic search, loaded once, is most of it: ``SYLK_SEMANTIC=off`` to leave it
  out, and the JSON says which).

    .venv/bin/python benchmarks/multisession_bench.py [--quick] [--sessions 50] [--nodes 10]
        [--latency 0.02] [--rounds 5] [--worktrees 20] [--same-files]

Nothing reaches the network; everything lives in a temporary directory. Prints one JSON
object.
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
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script
from bench_git import git_env

from backend.checkpoints.git_process import run_git
from backend.config.scheduling import default_workers
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import DagStatusChanged, EngineEvent, FileConflict
from backend.orchestration import Lane, SessionLimits, WorkerPool
from backend.worktrees import SessionWorktrees

DONE = ("passed", "failed", "cancelled")


def make_repo(root: Path, files: int = 40) -> Path:
    """A repository with ``files`` small source files committed on ``main``."""
    root.mkdir(parents=True)

    def git(*args: str) -> None:
        cmd = ["git", "-c", "core.hooksPath=/dev/null", *args]
        subprocess.run(cmd, cwd=root, env=git_env(), check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    for i in range(files):
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"mod{i}.py").write_text(f'"""Module {i}."""\n\nVALUE = {i}\n')
    (root / "README.md").write_text("# bench\n")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    return root


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    mean = statistics.fmean(values)
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
        "cv": round(statistics.pstdev(values) / mean, 3) if mean else 0.0,
    }


# -- worktrees ------------------------------------------------------------------------


async def worktree_side(repo: Path, data: Path, count: int) -> dict[str, Any]:
    """``SessionWorktrees.create`` vs ``git worktree add`` alone, alternating."""
    trees = SessionWorktrees(data / "worktrees")
    bare_root = data / "bare-worktrees"
    bare_root.mkdir(parents=True)
    ours: list[float] = []
    bare: list[float] = []
    for i in range(count):
        t = time.perf_counter()
        await trees.create(repo, f"wt-{i}", f"{i:08d}-bench-session")
        ours.append(time.perf_counter() - t)
        args = ["worktree", "add", "--quiet", "-b", f"bare/{i}", "--"]
        t = time.perf_counter()
        await run_git(repo / ".git", repo, [*args, str(bare_root / str(i)), "refs/heads/main"])
        bare.append(time.perf_counter() - t)
    mine, base = statistics.median(ours), statistics.median(bare)
    return {
        "count": count,
        "session_worktrees_create_ms": round(mine * 1000, 2),
        "git_worktree_add_ms": round(base * 1000, 2),
        "ratio": round(mine / base, 2),
    }


# -- the engine -----------------------------------------------------------------------


def _execute(op: str, **args: Any) -> dict[str, Any]:
    return {"name": "execute", "arguments": {"op": op, "args": args, "dry_run": False}}


def plan_document(plan_id: str, nodes: int) -> dict[str, Any]:
    made = [
        {"id": f"n{i}", "agent": "engineer", "prompt": f"write out/n{i}.txt", "depends_on": []}
        for i in range(nodes)
    ]
    return {"id": plan_id, "prompt": "a benchmark plan", "nodes": made}


def script_for(sessions: int, nodes: int, latency: float, same_files: bool) -> dict[str, Any]:
    """The Architects' turns in order, and one thread of two engineer turns per node;
    ``same_files``: every session writes the same paths (each write then a conflict
    with every other session that wrote it), else each its own."""
    turns: list[dict[str, Any]] = []
    threads: dict[str, Any] = {}
    for s in range(sessions):
        doc = plan_document(f"p{s}", nodes)
        turns += [{"tool_calls": [_execute("architect.plan.create", plan=doc)]}, {"text": "Ok."}]
        for i in range(nodes):
            path = f"out/n{i}.txt" if same_files else f"out/s{s}/n{i}.txt"
            write = _execute("engineer.file.write", path=path, content=f"{s}.{i}\n")
            threads[f"s{s}n{i}"] = {
                "match": f"Task n{i} of plan p{s}:",
                "turns": [
                    {"pause_s": latency, "text": "Writing.", "tool_calls": [write]},
                    {"pause_s": latency, "text": f"Wrote {path}."},
                ],
            }
    return {"turns": turns, "threads": threads}


async def engine_side(
    root: Path, sessions: int, nodes: int, latency: float, same_files: bool
) -> dict[str, Any]:
    repo = make_repo(root / "repo")
    script = root / "script.json"
    script.write_text(json.dumps(script_for(sessions, nodes, latency, same_files)))
    os.environ["SYLK_SCRIPT"] = str(script)
    config = EngineConfig(
        data_dir=root / "data",
        workspace=repo,
        provider="scripted",
        watch_files=False,
        run_approved_plans=True,
    )
    engine = Engine.from_parts(build(config))
    rss = {"built": _rss_now_mb()}
    ids: list[str] = []
    created: list[float] = []
    done_at: dict[str, float] = {}
    node_done = conflicts = 0
    try:
        for s in range(sessions):
            t = time.perf_counter()
            session = await engine.create_session(f"bench-{s}", activate=True, isolation=True)
            created.append(time.perf_counter() - t)
            ids.append(session.id)
            await engine.approval_command(session.id, "auto-edit")
            await engine.submit(session.id, "@architect plan the benchmark")
        rss["sessions_made"] = _rss_now_mb()
        t0, c0 = time.perf_counter(), time.process_time()

        def on_event(event: EngineEvent) -> None:
            nonlocal node_done, conflicts
            conflicts += isinstance(event, FileConflict)
            if not isinstance(event, DagStatusChanged) or event.status not in DONE:
                return
            if event.node_id is None:
                done_at[event.session_id or "?"] = time.perf_counter() - t0
            else:
                node_done += 1

        engine.events.add_listener(on_event)
        approved_at: dict[str, float] = {}
        for s, sid in enumerate(ids):
            await engine.submit(sid, f"/plan approve p{s}")
            approved_at[sid] = time.perf_counter() - t0
        approved_in = time.perf_counter() - t0
        for s, sid in enumerate(ids):
            await engine.wait_dag(sid, f"p{s}")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        rss["plans_done"] = _rss_now_mb()
        statuses = [(await engine.dag_status(sid))[0]["status"] for sid in ids]
        written = sum(
            len(list((Path(engine.get_session(sid).workspace) / "out").rglob("n*.txt")))
            for sid in ids
        )
    finally:
        await engine.aclose()
    total = sessions * nodes
    return {
        "wall_s": round(wall, 3),
        "nodes_per_s": round(total / wall, 2),
        "cpu_per_node_ms": round(cpu / total * 1000, 2),
        "approvals_submitted_in_s": round(approved_in, 3),
        "dags_passed": statuses.count("passed"),
        "nodes_finished": node_done,
        "files_written": written,
        "file_conflicts_announced": conflicts,
        "session_nodes_per_s": _spread([nodes / done_at[sid] for sid in ids if sid in done_at]),
        "session_nodes_per_s_from_own_approval": _spread(
            [nodes / (done_at[sid] - approved_at[sid]) for sid in ids if sid in done_at]
        ),
        "create_session_isolated_ms": _spread([c * 1000 for c in created]),
        "rss_now_mb": rss,
    }


# -- the pool against a bare semaphore --------------------------------------------------

Side = Callable[[int, int, int, float], Coroutine[Any, Any, list[float]]]


async def pool_side(sessions: int, per: int, workers: int, hold: float) -> list[float]:
    """Each session's finish time; jobs queued session by session, as DAGs queue them."""
    pool = WorkerPool(workers, limits=lambda _sid: SessionLimits())
    done = [0.0] * sessions
    t0 = time.perf_counter()

    async def job(s: int) -> None:
        lease = await pool.acquire(f"s{s}", Lane.USER, engineer=True)
        await asyncio.sleep(hold)
        lease.release()
        done[s] = time.perf_counter() - t0

    await asyncio.gather(*(job(s) for s in range(sessions) for _ in range(per)))
    return done


async def semaphore_side(sessions: int, per: int, workers: int, hold: float) -> list[float]:
    bound = asyncio.Semaphore(workers)
    done = [0.0] * sessions
    t0 = time.perf_counter()

    async def job(s: int) -> None:
        async with bound:
            await asyncio.sleep(hold)
        done[s] = time.perf_counter() - t0

    await asyncio.gather(*(job(s) for s in range(sessions) for _ in range(per)))
    return done


def scheduler_sides(sessions: int, per: int, rounds: int, latency: float) -> dict[str, Any]:
    workers = default_workers()
    sides: dict[str, Side] = {"pool": pool_side, "semaphore": semaphore_side}
    cost: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}

    async def timed(side: Side) -> tuple[float, float]:  # the loop's start-up not counted
        wall, cpu = time.perf_counter(), time.process_time()
        await side(sessions, per, workers, 0.0)
        return time.perf_counter() - wall, time.process_time() - cpu

    for _ in range(rounds):
        for name, side in sides.items():
            cost[name].append(asyncio.run(timed(side)))
    jobs = sessions * per
    per_job = {
        name: {
            "wall_us": round(statistics.median(w for w, _ in runs) / jobs * 1e6, 2),
            "cpu_us": round(statistics.median(c for _, c in runs) / jobs * 1e6, 2),
        }
        for name, runs in cost.items()
    }
    shaped = {}
    for name, side in sides.items():  # the engine's job shapes: two model latencies held
        finished = asyncio.run(side(sessions, per, workers, 2 * latency))
        shaped[name] = {
            "wall_s": round(max(finished), 3),
            "session_nodes_per_s": _spread([per / f for f in finished]),
        }
    return {
        "workers": workers,
        "jobs": jobs,
        "rounds": rounds,
        "per_acquire_release": per_job,
        "pool_overhead_per_job_us": {
            k: round(per_job["pool"][k] - per_job["semaphore"][k], 2) for k in ("wall_us", "cpu_us")
        },
        "latency_shaped": shaped,
    }


def _rss_now_mb() -> float:
    """This process's resident set now (``VmRSS``), not its peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 sessions x 5 nodes")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per model call")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worktrees", type=int, default=20, help="worktrees per side")
    parser.add_argument("--same-files", action="store_true", help="every session writes out/nI")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.nodes, args.worktrees = 10, 5, 10
    started = time.perf_counter()
    rss_start = _rss_mb()
    with tempfile.TemporaryDirectory(prefix="sylk-multisession-") as tmp:
        root = Path(tmp)
        repo = make_repo(root / "wt-repo")
        worktrees = asyncio.run(worktree_side(repo, root / "wt-data", args.worktrees))
        engine = asyncio.run(
            engine_side(root / "engine", args.sessions, args.nodes, args.latency, args.same_files)
        )
        rss_engine = _rss_mb()
        scheduler = scheduler_sides(args.sessions, args.nodes, args.rounds, args.latency)
    print(json.dumps({
        "bench": "multisession",
        "machine": machine_info.machine(),
        "sessions": args.sessions, "nodes_per_session": args.nodes,
        "latency_s": args.latency, "same_files": args.same_files,
        "semantic_search": os.environ.get("SYLK_SEMANTIC", "as configured"),
        "engine": engine,
        "scheduler": scheduler,
        "worktrees": worktrees,
        "peak_rss_mb": {"at_start": rss_start, "after_engine": rss_engine,
                        "largest_child": _rss_mb(resource.RUSAGE_CHILDREN)},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
