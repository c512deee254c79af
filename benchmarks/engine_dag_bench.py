"""1,000 subagents across 20 sessions through the whole engine, against the bare scheduler.

``dag_bench.py`` measures the scheduler with sleeping coroutines as nodes. This one runs
the same shape of work through everything a real plan goes through: S sessions, each
with an approved plan of K nodes (5 layers, each node depending on one or two nodes of
the layer before, ``max_concurrency`` 4), all started at once. Every node is an agent
request through the engine's answer path (the Guide's bus, the agent's turn with the
scripted provider, the answer and the node's notices written to the SQLite archive, the
DAG records to ``dags.db``); the scripted model waits ``--latency`` seconds per answer
to mimic a model's latency.

The baseline, in the same run: the same plans on ``DagScheduler`` alone, each node a
plain ``asyncio.sleep(latency)``. The difference is what the engine costs per node.

Reported: wall time and throughput of each side, the engine's CPU time per node
(``time.process_time``, the steadier figure on a shared machine), each session's
completion time and their spread (fairness), and the process's peak RSS.

    .venv/bin/python benchmarks/engine_dag_bench.py [--sessions 20] [--nodes 50] [--latency 0.05]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine_info  # benchmarks/machine_info.py, beside this script

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import DagStatusChanged, EngineEvent
from backend.orchestration import DagScheduler, NodeResult
from backend.plans import PlanNode, load_plan

AGENT = "tester"  # a plain agent turn: no knowledge-store shortcut answers it
LAYERS = 5


def plan_document(plan_id: str, nodes: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    width = nodes // LAYERS
    made: list[dict[str, Any]] = []
    for layer in range(LAYERS):
        for i in range(width):
            deps: list[str] = []
            if layer:
                before = [f"n{layer - 1}_{j}" for j in range(width)]
                deps = rng.sample(before, k=min(len(before), rng.choice((1, 2))))
            made.append({"id": f"n{layer}_{i}", "agent": AGENT,
                         "prompt": f"check part {layer}.{i}", "depends_on": deps})  # fmt: skip
    return {"id": plan_id, "prompt": "a benchmark plan", "nodes": made,
            "policy": {"max_concurrency": 4}}  # fmt: skip


def create_call(doc: dict[str, Any]) -> dict[str, Any]:
    return {"name": "execute", "arguments": {"op": "architect.plan.create",
                                             "args": {"plan": doc}, "dry_run": False}}  # fmt: skip


async def engine_side(sessions: int, nodes: int, latency: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "data").mkdir()
        (root / "ws").mkdir()
        docs = [plan_document(f"p{s}", nodes, seed=s) for s in range(sessions)]
        turns: list[dict[str, Any]] = []
        for doc in docs:  # the Architects propose, one session after the other
            turns += [{"tool_calls": [create_call(doc)]}, {"text": "Stored."}]
        turns += [{"text": "done"}] * (sessions * nodes)  # every node's answer
        script = root / "script.json"
        script.write_text(json.dumps({"turns": turns, "chunk_delay_s": latency}))
        config = EngineConfig(
            data_dir=root / "data",
            workspace=root / "ws",
            provider="scripted",
            watch_files=False,
            run_approved_plans=True,
        )
        os.environ["SYLK_SCRIPT"] = str(script)
        engine = Engine.from_parts(build(config))
        done_at: dict[str, float] = {}
        ids: list[str] = []
        try:
            for s in range(sessions):
                session = await engine.create_session(f"bench-{s}", activate=True)
                ids.append(session.id)
                await engine.submit(session.id, "@architect plan the benchmark")
            t0 = time.perf_counter()
            c0 = time.process_time()

            def on_event(event: EngineEvent) -> None:
                if not isinstance(event, DagStatusChanged) or event.node_id is not None:
                    return
                if event.status in ("passed", "failed", "cancelled"):
                    done_at[event.session_id or "?"] = time.perf_counter() - t0

            engine.events.add_listener(on_event)
            for sid, doc in zip(ids, docs, strict=True):
                await engine.submit(sid, f"/plan approve {doc['id']}")
            for sid, doc in zip(ids, docs, strict=True):
                await engine.wait_dag(sid, doc["id"])
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            statuses = [(await engine.dag_status(sid))[0]["status"] for sid in ids]
        finally:
            await engine.aclose()
    total = sessions * nodes
    finished = sorted(done_at.values())
    return {
        "wall_s": round(wall, 3),
        "nodes_per_s": round(total / wall, 1),
        "cpu_per_node_ms": round(cpu / total * 1000, 3),
        "dags_passed": statuses.count("passed"),
        "session_done_s": _spread(finished),
    }


async def scheduler_side(sessions: int, nodes: int, latency: float) -> dict[str, Any]:
    plans = [load_plan(plan_document(f"p{s}", nodes, seed=s)) for s in range(sessions)]

    async def run_node(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        await asyncio.sleep(latency)
        return NodeResult.passed("done")

    done_at: list[float] = []
    t0 = time.perf_counter()
    c0 = time.process_time()

    async def one(plan: Any, s: int) -> None:
        await DagScheduler(plan, run_node, dag_id=f"s{s}").run()
        done_at.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(p, s) for s, p in enumerate(plans)))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    total = sessions * nodes
    return {
        "wall_s": round(wall, 3),
        "nodes_per_s": round(total / wall, 1),
        "cpu_per_node_ms": round(cpu / total * 1000, 3),
        "session_done_s": _spread(sorted(done_at)),
    }


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "min": round(values[0], 3),
        "median": round(statistics.median(values), 3),
        "max": round(values[-1], 3),
        "spread": round(values[-1] - values[0], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    started = time.perf_counter()
    baseline = asyncio.run(scheduler_side(args.sessions, args.nodes, args.latency))
    engine = asyncio.run(engine_side(args.sessions, args.nodes, args.latency))
    per_node_extra_ms = (
        (engine["wall_s"] - baseline["wall_s"]) / (args.sessions * args.nodes) * 1000
    )
    print(json.dumps({
        "machine": machine_info.machine(),
        "sessions": args.sessions, "nodes_per_session": args.nodes,
        "subagents": args.sessions * args.nodes, "latency_s": args.latency,
        "scheduler_only": baseline, "engine": engine,
        "wall_ratio_engine_vs_scheduler": round(engine["wall_s"] / baseline["wall_s"], 2),
        "engine_extra_wall_per_node_ms": round(per_node_extra_ms, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
