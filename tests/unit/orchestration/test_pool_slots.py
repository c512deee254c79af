"""DAGs take their node slots from the worker pool: a session's limits hold across its
DAG's parallel nodes, engineer nodes are bounded apart, and sessions share fairly."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from backend.orchestration import (
    DagScheduler,
    DagStatus,
    Lane,
    NodeResult,
    PoolSlots,
    SessionLimits,
    WorkerPool,
)
from backend.plans import PlanNode
from tests.support.polling import until
from tests.unit.orchestration.dag_harness import make_plan, node


class CountingRunner:
    """Counts nodes running at once, all and engineer ones, per session (the dag id)."""

    def __init__(self) -> None:
        self.running: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.engineers = 0
        self.peak_engineers = 0
        self.started: list[str] = []
        self.gate = asyncio.Event()

    def for_session(self, sid: str) -> Any:
        async def run(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
            self.started.append(node.id)
            self.running[sid] = self.running.get(sid, 0) + 1
            self.peak[sid] = max(self.peak.get(sid, 0), self.running[sid])
            engineer = node.agent == "engineer"
            self.engineers += engineer
            self.peak_engineers = max(self.peak_engineers, self.engineers)
            try:
                await self.gate.wait()
            finally:
                self.running[sid] -= 1
                self.engineers -= engineer
            return NodeResult.passed(node.id)

        return run


async def test_a_dag_of_six_parallel_nodes_runs_two_at_a_time_under_max_tasks_2() -> None:
    pool = WorkerPool(8, limits=lambda _sid: SessionLimits(max_tasks=2, max_engineers=2))
    runner = CountingRunner()
    plan = make_plan(*(node(f"n{i}", agent="librarian") for i in range(6)), max_concurrency=6)
    dag = DagScheduler(plan, runner.for_session("s"), slots=PoolSlots(pool), owner="s")
    run = asyncio.create_task(dag.run())
    await until(lambda: pool.busy == 2 and pool.waiting == 4)
    assert runner.running == {"s": 2}
    runner.gate.set()
    outcome = await run
    assert outcome.status is DagStatus.PASSED
    assert runner.peak == {"s": 2}
    assert (pool.busy, pool.waiting) == (0, 0)


async def test_engineer_nodes_count_against_max_engineers() -> None:
    pool = WorkerPool(8, limits=lambda _sid: SessionLimits(max_tasks=4, max_engineers=1))
    runner = CountingRunner()
    nodes = [node(f"e{i}") for i in range(3)] + [node(f"r{i}", agent="tester") for i in range(3)]
    plan = make_plan(*nodes, max_concurrency=6)
    dag = DagScheduler(plan, runner.for_session("s"), slots=PoolSlots(pool), owner="s")
    run = asyncio.create_task(dag.run())
    await until(lambda: pool.busy == 4)
    assert runner.engineers == 1  # one engineer node and three tester nodes
    runner.gate.set()
    assert (await run).status is DagStatus.PASSED
    assert runner.peak_engineers == 1


async def test_two_sessions_dags_share_the_pool_in_turn() -> None:
    pool = WorkerPool(2)
    order: list[str] = []

    def runner(sid: str) -> Any:
        async def run(node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
            order.append(sid)
            await asyncio.sleep(0)
            return NodeResult.passed(node.id)

        return run

    plans = {s: make_plan(*(node(f"{s}{i}") for i in range(8)), max_concurrency=8) for s in "ab"}
    dags = [
        DagScheduler(plans[s], runner(s), dag_id=s, slots=PoolSlots(pool), owner=s) for s in "ab"
    ]
    outcomes = await asyncio.gather(*(d.run() for d in dags))
    assert all(o.status is DagStatus.PASSED for o in outcomes)
    # a started two before b queued; after that the sessions alternate until a runs out
    gaps = [abs(order[: i + 1].count("a") - order[: i + 1].count("b")) for i in range(16)]
    assert max(gaps) <= 3


async def test_a_cancelled_dag_gives_every_worker_back() -> None:
    pool = WorkerPool(3)
    runner = CountingRunner()
    plan = make_plan(*(node(f"n{i}") for i in range(6)), max_concurrency=6)
    dag = DagScheduler(plan, runner.for_session("s"), slots=PoolSlots(pool, Lane.USER), owner="s")
    run = asyncio.create_task(dag.run())
    await until(lambda: pool.busy == 3 and pool.waiting == 3)
    dag.cancel()
    assert (await run).status is DagStatus.CANCELLED
    assert (pool.busy, pool.waiting) == (0, 0)
