"""Engineer pipelines on the local executor against Ray with the same concurrency.

N pipelines (default 200) as S sessions x K engineer nodes (K = 10 up to N = 10; S =
N / K): each session in one git repository (no worktree: the Ray path hands the
session's tree to its workers through git refs, the local path edits it in place),
each with an approved plan of K independent engineer nodes. Every node is a whole
pipeline through the real engine: the scripted engineer waits ``--latency`` seconds
before each of its three turns (read its module, edit it, say so), the inspector runs Sylk's own
ruff, the tester a real ``pytest -q`` on the module's test (``cluster_fixture``). The
driver's worker pool has ``--concurrency`` workers; on Ray the head (started here, on
127.0.0.1) has as many CPUs and each pipeline reserves one, so both sides run C at once.

Reported per executor: each pipeline's wall time (its node running -> passed on the
driver) and its overhead (wall minus the simulated latency and minus the tester's
pytest timed alone; also minus ruff alone), median and p95; how many pipelines' testers
ran a test (from the completed pipeline's view); throughput (pipelines a minute);
CPU seconds per pipeline (this process, its reaped children, and every live descendant:
Ray's head and workers); the driver's resident set and, on Ray, the head and workers'.
Ray's extra costs: the head's start-up, a worker's start-up (the first trivial task's
round trip against a warm one), the driver's git snapshot and apply per pipeline as they
ran, and the whole handoff (snapshot, fetch, push, apply) timed alone on the project.

    .venv/bin/python benchmarks/cluster_bench.py [--pipelines 200] [--concurrency 2]
        [--executor local|ray|both] [--latency 0.2]

Nothing reaches the network; everything lives in a temporary directory. Prints one JSON
object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cluster_fixture as fx  # benchmarks/cluster_fixture.py, beside this script
import machine_info
from sqlalchemy import func, select

from backend.archive.schema import METADATA
from backend.archive.store import Archive
from backend.config.orchestration import OrchestrationSettings
from backend.config.scheduling import SchedulingSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.events import DagStatusChanged, EngineEvent, PipelineMoved


def _spread_ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median": round(statistics.median(ordered) * 1000, 1),
        "p95": round(p95 * 1000, 1),
        "max": round(ordered[-1] * 1000, 1),
    }


def _cpu_s() -> float:
    """This process, its reaped children, and its live descendants (Ray's processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    return own + fx.tree_cpu_s(os.getpid())


class CountedWrites:
    """Counts the archive's write transactions (every write goes through ``Archive.write``
    or ``Archive.awrite``, one transaction each) while it is installed."""

    def __init__(self) -> None:
        self.count = 0
        self.sync, self.async_ = Archive.write, Archive.awrite
        counted = self

        def write(self: Archive, fn: Any, *, key: str | None = None) -> Any:
            counted.count += 1
            return counted.sync(self, fn, key=key)

        async def awrite(self: Archive, fn: Any, *, key: str | None = None) -> Any:
            counted.count += 1
            return await counted.async_(self, fn, key=key)

        Archive.write = write  # type: ignore[method-assign]
        Archive.awrite = awrite  # type: ignore[method-assign]

    def restore(self) -> None:
        Archive.write = self.sync  # type: ignore[method-assign]
        Archive.awrite = self.async_  # type: ignore[method-assign]


def table_rows(archive: Archive) -> dict[str, int]:
    """Rows in each of the archive's tables."""

    def read(conn: Any) -> dict[str, int]:
        return {
            t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
            for t in METADATA.sorted_tables
        }

    rows: dict[str, int] = archive.read(read)
    return rows


class Timed:
    """Wraps an async function in a module's namespace, keeping each call's seconds."""

    def __init__(self, module: Any, name: str) -> None:
        self.module, self.name = module, name
        self.original: Callable[..., Awaitable[Any]] = getattr(module, name)
        self.seconds: list[float] = []

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return await self.original(*args, **kwargs)
            finally:
                self.seconds.append(time.perf_counter() - t)

        setattr(module, name, timed)

    def restore(self) -> None:
        setattr(self.module, self.name, self.original)


@dataclass(frozen=True)
class Shape:
    """What runs: S sessions x K engineer nodes, C at once, each model turn after L s."""

    sessions: int
    nodes: int
    concurrency: int
    latency: float

    @property
    def pipelines(self) -> int:
        return self.sessions * self.nodes


class Watch:
    """Each node's running -> passed on the driver, failures, and whether its tester ran."""

    def __init__(self) -> None:
        self.started: dict[tuple[str, str], float] = {}
        self.passed: dict[tuple[str, str], float] = {}
        self.failed: list[str] = []
        self.tests_run: dict[tuple[str, str], int] = {}

    def __call__(self, event: EngineEvent) -> None:
        now = time.perf_counter()
        if isinstance(event, DagStatusChanged) and event.node_id is not None:
            key = (event.session_id or "?", event.node_id)
            if event.status == "running":
                self.started.setdefault(key, now)
            elif event.status == "passed":
                self.passed[key] = now
            elif event.status in ("failed", "cancelled"):
                self.failed.append(f"{event.node_id} {event.status}: {event.error}"[:300])
        elif isinstance(event, PipelineMoved) and event.state == "completed":
            tested = event.view.get("tester") or [{}]
            key = (event.session_id or "?", event.task_id)
            self.tests_run[key] = tested[-1].get("tests_run", 0)

    def walls(self) -> list[float]:
        return [self.passed[k] - self.started[k] for k in self.passed if k in self.started]


def make_parts(root: Path, project: Path, executor: str, shape: Shape) -> EngineParts:
    """The driver's engine on the scripted model; ``executor`` its orchestration backend."""
    script = root / "script.json"
    script.write_text(json.dumps(fx.script_for(shape.sessions, shape.nodes, shape.latency)))
    os.environ["SYLK_SCRIPT"] = str(script)  # Ray's workers inherit it (SYLK_* variables)
    base = load_config(None)
    settings = base.model_copy(update={
        "scheduling": SchedulingSettings(max_workers=shape.concurrency),
        "sessions": base.sessions.model_copy(update={"git_isolation": False}),
        "orchestration": OrchestrationSettings(backend=executor, address="auto"),
    })  # fmt: skip
    config = EngineConfig(data_dir=root / "data", workspace=project, provider="scripted",
                          watch_files=False, run_approved_plans=True)  # fmt: skip
    return build(config, settings)


async def run_plans(root: Path, executor: str, shape: Shape) -> dict[str, Any]:
    """S sessions' plans approved one after the other, all waited for; what the events
    said, and the archive's write transactions and model calls meanwhile."""
    project = fx.make_project(root / "project", shape.sessions, shape.nodes)
    parts = make_parts(root, project, executor, shape)
    engine, archive = Engine.from_parts(parts), parts.archive
    watch = Watch()
    ids: list[str] = []
    rss: dict[str, Any] = {"built": fx.rss_now_mb()}
    try:
        for s in range(shape.sessions):
            session = await engine.create_session(f"bench-{s}", activate=True, isolation=False)
            ids.append(session.id)
            await engine.approval_command(session.id, "auto-edit")
            await engine.submit(session.id, "@architect plan the benchmark")
        engine.events.add_listener(watch)
        rows0 = table_rows(archive)
        writes = CountedWrites()
        t0, cpu0 = time.perf_counter(), _cpu_s()
        for s, sid in enumerate(ids):
            await engine.submit(sid, f"/plan approve p{s}")
        for s, sid in enumerate(ids):
            await engine.wait_dag(sid, f"p{s}")
        wall, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
        writes.restore()
        rows = table_rows(archive)
        rss["plans_done"] = fx.rss_now_mb()
        rss["descendants_plans_done"] = fx.tree_rss_mb(os.getpid())
        if executor == "ray":
            rss["each_ray_worker_plans_done"] = fx.ray_worker_rss_mb(os.getpid())
        statuses = [(await engine.dag_status(sid))[0]["status"] for sid in ids]
    finally:
        await engine.aclose()
    edited = sum(
        (project / "pkg" / f"{fx.module_name(s, i)}.py").read_text() == f"VALUE = {1000 + i}\n"
        for s in range(shape.sessions)
        for i in range(shape.nodes)
    )
    return {
        "wall_s": wall, "cpu_s": cpu, "rss_mb": rss, "statuses": statuses,
        "failed": watch.failed, "edited": edited, "walls": watch.walls(),
        "tests_run": list(watch.tests_run.values()), "archive_writes": writes.count,
        "rows_added": {k: n - rows0.get(k, 0) for k, n in rows.items() if n != rows0.get(k, 0)},
    }  # fmt: skip


def summarise(
    raw: dict[str, Any], pipelines: int, latency: float, alone: dict[str, float]
) -> dict[str, Any]:
    simulated = fx.TURNS * latency
    pytest_s = alone["pytest_one_test_ms"] / 1000
    ruff_s = alone["ruff_check_one_file_ms"] / 1000
    walls: list[float] = raw["walls"]
    return {
        "dags_passed": raw["statuses"].count("passed"),
        "pipelines_passed": len(walls),
        "modules_edited_once": raw["edited"],
        "failures": raw["failed"][:5],
        "wall_s": round(raw["wall_s"], 2),
        "pipelines_per_minute": round(pipelines / raw["wall_s"] * 60, 1),
        "pipeline_wall_ms": _spread_ms(walls),
        "overhead_ms": _spread_ms([w - simulated - pytest_s for w in walls]),
        "overhead_beyond_checks_ms": _spread_ms([w - simulated - pytest_s - ruff_s for w in walls]),
        "pipelines_whose_tester_ran_pytest": sum(1 for n in raw["tests_run"] if n > 0),
        "cpu_s_per_pipeline": round(raw["cpu_s"] / pipelines, 3),
        "archive": _archive_figures(raw, pipelines),
        "rss_mb": raw["rss_mb"],
    }


def _archive_figures(raw: dict[str, Any], pipelines: int) -> dict[str, Any]:
    """The driver's archive, approval to done: write transactions per pipeline and per
    model call (a ``usage`` row is one model call), and the rows each table gained."""
    calls = raw["rows_added"].get("usage", 0)
    return {
        "write_transactions": raw["archive_writes"],
        "model_calls": calls,
        "writes_per_pipeline": round(raw["archive_writes"] / pipelines, 2),
        "writes_per_model_call": round(raw["archive_writes"] / calls, 2) if calls else None,
        "rows_added": raw["rows_added"],
    }


def start_ray(concurrency: int, temp: str) -> dict[str, Any]:
    """A local head (loopback, no dashboard), timed; a worker's start-up from the first
    trivial task against warm ones. Started before the engine, which connects to it."""
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=concurrency, include_dashboard=False, _node_ip_address="127.0.0.1",
             _temp_dir=temp, log_to_driver=False)  # fmt: skip
    head = time.perf_counter() - t

    @ray.remote(num_cpus=1)
    def nothing() -> int:
        return os.getpid()

    t = time.perf_counter()
    ray.get(nothing.remote())
    cold = time.perf_counter() - t
    warm: list[float] = []
    for _ in range(5):
        t = time.perf_counter()
        ray.get(nothing.remote())
        warm.append(time.perf_counter() - t)
    return {
        "ray_version": ray.__version__,
        "head_start_s": round(head, 2),
        "first_task_ms": round(cold * 1000, 1),
        "warm_task_ms": round(statistics.median(warm) * 1000, 1),
        "rss_mb_after_head_start": {"driver": fx.rss_now_mb(),
                                    "head_and_workers": fx.tree_rss_mb(os.getpid()),
                                    "each_worker": fx.ray_worker_rss_mb(os.getpid())},
    }  # fmt: skip


def ray_side(root: Path, shape: Shape, temp: str) -> dict[str, Any]:
    import ray

    from backend.cluster import ray_pipelines

    costs = start_ray(shape.concurrency, temp)
    snapshot = Timed(ray_pipelines, "snapshot_base")
    apply = Timed(ray_pipelines, "apply_result")
    try:
        raw = asyncio.run(run_plans(root, "ray", shape))
    finally:
        snapshot.restore()
        apply.restore()
        ray.shutdown()
    costs["driver_snapshot_ms"] = _spread_ms(snapshot.seconds)
    costs["driver_apply_ms"] = _spread_ms(apply.seconds)
    return {"raw": raw, "costs": costs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--executor", choices=("local", "ray", "both"), default="both")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model turn")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the costs alone")
    args = parser.parse_args()
    nodes = min(10, args.pipelines)
    sessions = max(1, args.pipelines // nodes)
    shape = Shape(sessions, nodes, args.concurrency, args.latency)
    pipelines = shape.pipelines
    fx.tools_env()
    started = time.perf_counter()
    report: dict[str, Any] = {
        "bench": "cluster",
        "machine": machine_info.machine(),
        "pipelines": pipelines, "sessions": sessions, "nodes_per_session": nodes,
        "concurrency": args.concurrency, "latency_s_per_turn": args.latency,
        "simulated_latency_s_per_pipeline": fx.TURNS * args.latency,
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="cb", dir="/tmp") as tmp:
        root = Path(tmp)
        alone_repo = fx.make_project(root / "alone", 1, 1)
        alone = fx.checks_alone(alone_repo, args.rounds)
        report["alone"] = alone
        if args.executor in ("local", "both"):
            raw = asyncio.run(run_plans(root / "local", "local", shape))
            report["local"] = summarise(raw, pipelines, args.latency, alone)
        if args.executor in ("ray", "both"):
            report["handoff_alone_ms"] = fx.handoff_alone_sync(alone_repo, args.rounds)
            ray_temp = tempfile.mkdtemp(prefix="r", dir="/tmp")  # Ray's sockets: a short path
            try:
                done = ray_side(root / "ray", shape, ray_temp)
            finally:
                shutil.rmtree(ray_temp, ignore_errors=True)
            report["ray"] = summarise(done["raw"], pipelines, args.latency, alone)
            report["ray"]["extra_costs"] = done["costs"]
    medians = [report[k]["overhead_ms"].get("median") for k in ("local", "ray") if k in report]
    if len(medians) == 2 and None not in medians:
        report["ray_minus_local_overhead_median_ms"] = round(medians[1] - medians[0], 1)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
