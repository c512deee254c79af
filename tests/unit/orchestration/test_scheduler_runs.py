"""The scheduler runs a DAG: dependencies first, within the bound, outputs handed down."""

from __future__ import annotations

import asyncio

import pytest

from backend.orchestration import (
    DagScheduler,
    DagStatus,
    FairSlots,
    NodeEvent,
    NodeResult,
    NodeStatus,
)
from backend.plans import PlanNode
from tests.support.clocks import FakeClock
from tests.support.polling import finishes, until
from tests.unit.orchestration.dag_harness import EventLog, ScriptedRunner, make_plan, node


async def test_dependants_get_their_upstream_outputs_and_named_ancestors() -> None:
    plan = make_plan(
        node("t1"),
        node("t2", "t1"),
        node("t3", "t1"),
        node("t4", "t2", "t3", context={"upstream_outputs": ["t1"]}),
    )
    runner = ScriptedRunner()
    outcome = await DagScheduler(plan, runner).run()
    assert outcome.status is DagStatus.PASSED
    assert runner.upstream == {
        "t1": {},
        "t2": {"t1": "out-t1"},
        "t3": {"t1": "out-t1"},
        "t4": {"t2": "out-t2", "t3": "out-t3", "t1": "out-t1"},
    }
    assert outcome.outputs == {f"t{i}": f"out-t{i}" for i in range(1, 5)}
    assert runner.started.index("t4") > max(runner.started.index("t2"), runner.started.index("t3"))


async def test_no_more_than_max_concurrency_nodes_run_at_once() -> None:
    plan = make_plan(*(node(f"n{i}") for i in range(12)), max_concurrency=3)
    runner = ScriptedRunner()
    runner.gate(*(f"n{i}" for i in range(12)))
    run = asyncio.create_task(DagScheduler(plan, runner).run())
    await until(lambda: runner.running == 3)
    for _ in range(5):  # give the loop every chance to start a fourth
        await asyncio.sleep(0)
    assert runner.running == 3
    runner.open(*(f"n{i}" for i in range(12)))
    outcome = await finishes(run, what="the DAG")
    assert outcome.status is DagStatus.PASSED
    assert runner.peak == 3
    assert len(runner.finished) == 12


async def test_a_shared_bound_holds_across_dags_and_serves_sessions_in_turn() -> None:
    slots = FairSlots(2)
    runner = ScriptedRunner()
    plans = [make_plan(*(node(f"{s}{i}") for i in range(6)), max_concurrency=4) for s in ("a", "b")]
    runs = [
        DagScheduler(p, runner, dag_id=f"dag-{s}", slots=slots, owner=s)
        for p, s in zip(plans, "ab", strict=True)
    ]
    outcomes = await finishes(asyncio.gather(*(r.run() for r in runs)), what="both DAGs")
    assert [o.status for o in outcomes] == [DagStatus.PASSED, DagStatus.PASSED]
    assert runner.peak == 2
    # a took both free slots and queued two more before b queued any; from then on the
    # freed slots alternate between the sessions (a plain semaphore would serve a0-a3 first).
    assert runner.started == [
        "a0",
        "a1",
        "a2",
        "b0",
        "a3",
        "b1",
        "a4",
        "b2",
        "a5",
        "b3",
        "b4",
        "b5",
    ]


async def test_a_node_starts_when_its_own_dependencies_passed_not_its_whole_layer() -> None:
    plan = make_plan(node("slow"), node("fast"), node("after_fast", "fast"))
    runner = ScriptedRunner()
    runner.gate("slow")
    run = asyncio.create_task(DagScheduler(plan, runner).run())
    await until(lambda: "after_fast" in runner.finished)
    assert runner.running == 1 and "slow" not in runner.finished
    runner.open("slow")
    assert (await finishes(run, what="the DAG")).status is DagStatus.PASSED


async def test_ready_nodes_start_by_priority_then_layer_then_plan_order() -> None:
    plan = make_plan(
        node("root"),
        node("low", metadata={"priority": "low"}),
        node("deep", "root"),
        node("plain"),
        node("urgent", metadata={"priority": "critical"}),
        max_concurrency=1,
    )
    runner = ScriptedRunner()
    await DagScheduler(plan, runner).run()
    assert runner.started == ["urgent", "root", "plain", "deep", "low"]


async def test_every_transition_is_an_event_with_attempts_and_durations() -> None:
    clock = FakeClock(0.0)

    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        clock.advance(2.5)
        return NodeResult.passed(node.id)

    events = EventLog()
    plan = make_plan(node("a"), node("b", "a"))
    await DagScheduler(plan, run_node, on_event=events, clock=clock).run()
    assert [(e.node_id, e.status.value, e.attempt) for e in events] == [
        ("a", "pending", 0),
        ("b", "pending", 0),
        ("a", "running", 1),
        ("a", "passed", 1),
        ("b", "running", 1),
        ("b", "passed", 1),
    ]
    passed = [e for e in events if e.status is NodeStatus.PASSED]
    assert [e.duration_s for e in passed] == [2.5, 2.5]
    assert {(e.dag_id, e.max_attempts) for e in events} == {("plan-1", 3)}


async def test_a_listener_that_raises_does_not_stop_the_dag(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(event: NodeEvent) -> None:
        raise ValueError("listener bug")

    outcome = await DagScheduler(make_plan(node("a")), ScriptedRunner(), on_event=broken).run()
    assert outcome.status is DagStatus.PASSED
    assert "a status listener failed" in caplog.text


async def test_a_scheduler_runs_once() -> None:
    scheduler = DagScheduler(make_plan(node("a")), ScriptedRunner())
    await scheduler.run()
    with pytest.raises(RuntimeError, match="runs its DAG once"):
        await scheduler.run()
