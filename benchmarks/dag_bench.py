"""The DAG scheduler's overhead against plain asyncio, and many sessions' DAGs at once.

Part 1, overhead. One plan of N nodes in L layers (each node depends on two nodes of
the layer before, so the layering is exactly L deep). The same coroutine runs per
node on every side:

* ``gather``    — the baseline: ``await asyncio.gather(*layer)`` layer after layer;
* ``scheduler`` — ``DagScheduler`` with ``max_concurrency`` = the layer width (so the
  bound never binds), no listener, no store;
* ``scheduler+events+store`` — the same with a status listener (appends to a list)
  and a ``MemoryDagStateStore`` (records saved as nodes start and end);
* ``bounded``   — both limited to 4 at once: the scheduler with ``max_concurrency`` 4
  against ``gather`` with an ``asyncio.Semaphore(4)`` per layer.

Two workloads: a no-op coroutine (pure overhead) and a 1 ms sleep. Sides alternate
round by round; figures are medians over rounds, per node, in wall time and in this
process's CPU time (``time.process_time``: on a shared machine the CPU figure is the
steadier measure of overhead; wall time also counts waiting for a core).

Part 2, sessions. S sessions, each with a DAG of K nodes (5 layers, each node
depending on one or two nodes of the layer before, ``max_concurrency`` 4), all run at
once under one global bound of G slots; each node sleeps a seeded random 5-50 ms to
mimic a model's latency. Reported: throughput, each session's completion time and
their spread (fairness), for the fair shared bound (``FairSlots``) and for a plain
FIFO ``asyncio.Semaphore`` as the bound; then again with session 0 skewed (five
times the nodes, all in one layer, ``max_concurrency`` 16), where a FIFO bound hands
it a share by how many waiters it queues and the fair bound one share in turn. Peak
memory (tracemalloc) is taken in a separate, untimed run of each part.

    .venv/bin/python benchmarks/dag_bench.py [--nodes 2000] [--layers 20] [--rounds 7]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.orchestration import (
    DagScheduler,
    FairSlots,
    MemoryDagStateStore,
    NodeEvent,
    NodeResult,
)
from backend.plans import PlanNode, ValidatedPlan, load_plan

Work = Callable[[], Awaitable[None]]
Timing = tuple[float, float]  # wall seconds, CPU seconds of this process
DONE = NodeResult.passed()


async def noop() -> None:
    return None


async def tiny_sleep() -> None:
    await asyncio.sleep(0.001)


def layered_plan(nodes: int, layers: int, concurrency: int) -> ValidatedPlan:
    width = nodes // layers
    spec: list[dict[str, Any]] = []
    for layer in range(layers):
        for i in range(width):
            deps = [] if layer == 0 else [f"n{layer - 1}_{i}", f"n{layer - 1}_{(i + 1) % width}"]
            spec.append(
                {"id": f"n{layer}_{i}", "agent": "engineer", "prompt": "x", "depends_on": deps}
            )
    return load_plan({"id": "bench", "nodes": spec, "policy": {"max_concurrency": concurrency}})


async def run_gather(plan: ValidatedPlan, work: Work, bound: int | None) -> Timing:
    semaphore = asyncio.Semaphore(bound) if bound else None

    async def one() -> None:
        if semaphore is None:
            await work()
            return
        async with semaphore:
            await work()

    started, cpu = time.perf_counter(), time.process_time()
    for layer in plan.layers:
        await asyncio.gather(*(one() for _ in layer))
    return time.perf_counter() - started, time.process_time() - cpu


async def run_scheduler(
    plan: ValidatedPlan, work: Work, bound: int | None, *, extras: bool = False
) -> Timing:
    async def run_node(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        await work()
        return DONE

    events: list[NodeEvent] = []
    scheduler = DagScheduler(
        plan,
        run_node,
        max_concurrency=bound,
        on_event=events.append if extras else None,
        store=MemoryDagStateStore() if extras else None,
    )
    started, cpu = time.perf_counter(), time.process_time()
    outcome = await scheduler.run()
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert outcome.status.value == "passed"
    return elapsed


async def overhead(args: argparse.Namespace) -> dict[str, Any]:
    width = args.nodes // args.layers
    t0 = time.perf_counter()
    plan = layered_plan(args.nodes, args.layers, width)
    validate_ms = (time.perf_counter() - t0) * 1000
    sides: dict[str, Callable[[Work], Awaitable[Timing]]] = {
        "gather": lambda w: run_gather(plan, w, None),
        "scheduler": lambda w: run_scheduler(plan, w, None),
        "scheduler+events+store": lambda w: run_scheduler(plan, w, None, extras=True),
        "gather_bounded4": lambda w: run_gather(plan, w, 4),
        "scheduler_bounded4": lambda w: run_scheduler(plan, w, 4),
    }
    out: dict[str, Any] = {"nodes": len(plan.nodes), "layers": len(plan.layers)}
    out["validate_plan_ms"] = round(validate_ms, 1)
    n = len(plan.nodes)
    for name, work in (("noop", noop), ("sleep_1ms", tiny_sleep)):
        times: dict[str, list[Timing]] = {side: [] for side in sides}
        for run in sides.values():  # one unmeasured warm-up each
            await run(work)
        for _ in range(args.rounds):
            for side, run in sides.items():
                gc.collect()
                times[side].append(await run(work))
        wall = {side: statistics.median(t[0] for t in ts) for side, ts in times.items()}
        cpu = {side: statistics.median(t[1] for t in ts) for side, ts in times.items()}

        def ratios(figures: dict[str, float]) -> dict[str, float]:
            return {
                "scheduler": round(figures["scheduler"] / figures["gather"], 3),
                "scheduler+events+store": round(
                    figures["scheduler+events+store"] / figures["gather"], 3
                ),
                "bounded4": round(figures["scheduler_bounded4"] / figures["gather_bounded4"], 3),
            }

        out[name] = {
            "wall_median_ms": {side: round(m * 1000, 2) for side, m in wall.items()},
            "wall_per_node_us": {side: round(m / n * 1e6, 2) for side, m in wall.items()},
            "cpu_per_node_us": {side: round(m / n * 1e6, 2) for side, m in cpu.items()},
            "wall_ratio_vs_gather": ratios(wall),
            "cpu_ratio_vs_gather": ratios(cpu),
        }
    return out


def session_plan(
    session: int, nodes: int, rng: random.Random, *, layers: int = 5, concurrency: int = 4
) -> ValidatedPlan:
    width = nodes // layers
    spec: list[dict[str, Any]] = []
    for layer in range(layers):
        for i in range(width):
            deps = []
            if layer:
                deps = sorted({f"s{session}n{layer - 1}_{rng.randrange(width)}" for _ in range(2)})
            spec.append(
                {
                    "id": f"s{session}n{layer}_{i}",
                    "agent": "engineer",
                    "prompt": "x",
                    "depends_on": deps,
                }
            )
    return load_plan(
        {
            "id": f"dag{session}",
            "session_id": f"session{session}",
            "nodes": spec,
            "policy": {"max_concurrency": concurrency},
        }
    )


class FifoSlots:
    """A plain semaphore behind the Slots protocol: freed slots go in arrival order."""

    def __init__(self, limit: int) -> None:
        self._semaphore = asyncio.Semaphore(limit)

    async def acquire(self, owner: str) -> None:
        await self._semaphore.acquire()

    def release(self) -> None:
        self._semaphore.release()


async def sessions_run(
    args: argparse.Namespace, slots_kind: str, *, skewed: bool = False
) -> dict[str, Any]:
    """All sessions' DAGs at once under one bound; ``skewed``: session 0 is one wide DAG."""
    rng = random.Random(args.seed)
    plans = [session_plan(s, args.per_session, rng) for s in range(args.sessions)]
    if skewed:  # 5x the nodes in one layer, 16 at once: it floods a FIFO bound
        plans[0] = session_plan(0, 5 * args.per_session, rng, layers=1, concurrency=16)
    latency = {n: rng.uniform(0.005, 0.050) for p in plans for n in p.nodes}
    slots = FairSlots(args.global_limit) if slots_kind == "fair" else FifoSlots(args.global_limit)
    finished: dict[str, float] = {}

    async def run_node(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        await asyncio.sleep(latency[node.id])
        return DONE

    started = time.perf_counter()

    async def one(plan: ValidatedPlan) -> None:
        owner = plan.plan.session_id or plan.id
        outcome = await DagScheduler(plan, run_node, slots=slots, owner=owner).run()
        assert outcome.status.value == "passed"
        finished[owner] = time.perf_counter() - started

    await asyncio.gather(*(one(p) for p in plans))
    wall = time.perf_counter() - started
    done = sorted(v for k, v in finished.items() if not (skewed and k == "session0"))
    total_sleep = sum(latency.values())
    extra = {"wide_session_done_s": round(finished["session0"], 3)} if skewed else {}
    return extra | {
        "wall_s": round(wall, 3),
        "nodes_per_s": round(len(latency) / wall, 1),
        "ideal_wall_s": round(total_sleep / args.global_limit, 3),
        "session_done_s": {
            "min": round(done[0], 3),
            "median": round(statistics.median(done), 3),
            "max": round(done[-1], 3),
            "stdev": round(statistics.pstdev(done), 3),
        },
        "spread_max_minus_min_s": round(done[-1] - done[0], 3),
    }


async def peak_memory(args: argparse.Namespace) -> dict[str, Any]:
    width = args.nodes // args.layers
    plan = layered_plan(args.nodes, args.layers, width)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    await run_scheduler(plan, noop, None, extras=True)
    overhead_peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    await sessions_run(args, "fair")
    sessions_peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return {
        "overhead_dag_peak_mb": round(overhead_peak / 2**20, 2),
        "overhead_dag_peak_kb_per_node": round(overhead_peak / 1024 / args.nodes, 2),
        "sessions_peak_mb_incl_plans": round(sessions_peak / 2**20, 2),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    out: dict[str, Any] = {"machine": machine_info.machine()}
    out["overhead"] = await overhead(args)
    sessions: dict[str, Any] = {
        "sessions": args.sessions,
        "nodes_per_session": args.per_session,
        "global_limit": args.global_limit,
        "max_concurrency_per_dag": 4,
    }
    for kind in ("fair", "fifo"):
        sessions[kind] = await sessions_run(args, kind)
    for kind in ("fair", "fifo"):  # session_done_s: the 19 other sessions
        sessions[f"skewed_{kind}"] = await sessions_run(args, kind, skewed=True)
    out["sessions"] = sessions
    out["memory"] = await peak_memory(args)
    out["wall_seconds"] = round(time.perf_counter() - started, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--layers", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--per-session", type=int, default=50)
    parser.add_argument("--global-limit", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2))


if __name__ == "__main__":
    main()
