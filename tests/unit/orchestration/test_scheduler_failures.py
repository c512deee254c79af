"""When nodes fail: retries with backoff, time limits, fail_fast or not, cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest

from backend.errors import SylkError
from backend.orchestration import DagScheduler, DagStatus, NodeResult, NodeStatus
from backend.plans import PlanNode
from tests.support.polling import finishes, until
from tests.unit.orchestration.dag_harness import EventLog, ScriptedRunner, make_plan, node


class FakeSleep:
    """Records each backoff and returns at once (one loop turn), so no test waits."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
async def loop_errors() -> AsyncIterator[list[dict[str, Any]]]:
    """What the loop's exception handler saw (e.g. 'Task exception was never retrieved')."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    yield seen
    loop.set_exception_handler(None)


async def test_a_failed_attempt_is_retried_after_a_doubling_backoff() -> None:
    plan = make_plan(node("a", metadata={"retry": {"max": 3, "backoff_ms": 1000}}))
    runner, sleep, events = ScriptedRunner(), FakeSleep(), EventLog()
    runner.fail_times["a"] = 2
    outcome = await DagScheduler(plan, runner, sleep=sleep, on_event=events).run()
    assert outcome.status is DagStatus.PASSED
    assert sleep.delays == [1.0, 2.0]
    assert events.of("a") == [
        ("pending", 0),
        ("running", 1),
        ("retrying", 1),
        ("running", 2),
        ("retrying", 2),
        ("running", 3),
        ("passed", 3),
    ]
    retrying = [e for e in events if e.status is NodeStatus.RETRYING]
    assert [(e.delay_s, e.error) for e in retrying] == [(1.0, "RuntimeError: a broke")] * 1 + [
        (2.0, "RuntimeError: a broke")
    ]
    assert outcome.records["a"].attempts == 3


async def test_a_node_without_its_own_retry_takes_the_policy_default() -> None:
    plan = make_plan(node("a"), default_retry={"max": 2, "backoff_ms": 500})
    runner, sleep = ScriptedRunner(), FakeSleep()
    runner.fail_times["a"] = 5
    outcome = await DagScheduler(plan, runner, sleep=sleep).run()
    assert outcome.status is DagStatus.FAILED
    assert sleep.delays == [0.5, 1.0]
    record = outcome.records["a"]
    assert (record.status, record.attempts, record.error) == (
        NodeStatus.FAILED,
        3,
        "RuntimeError: a broke",
    )


async def test_a_failure_marked_not_retryable_fails_at_once() -> None:
    calls = 0

    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        nonlocal calls
        calls += 1
        return NodeResult.failed("the user chose fail", retryable=False)

    outcome = await DagScheduler(make_plan(node("a")), run_node, sleep=FakeSleep()).run()
    assert calls == 1
    assert outcome.records["a"].error == "the user chose fail"


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ("just text", "the node's runner returned str, not a NodeResult"),
        (NodeResult(ok=False), "the node's runner reported a failure without a reason"),
    ],
)
async def test_a_runner_that_answers_wrongly_fails_its_node_clearly(
    returned: object, error: str
) -> None:
    async def run_node(node: PlanNode, upstream: object) -> Any:
        return returned

    plan = make_plan(node("a", metadata={"retry": {"max": 0}}))
    outcome = await DagScheduler(plan, run_node).run()
    assert outcome.records["a"].error == error


async def test_a_typed_error_from_the_runner_is_the_node_s_error() -> None:
    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        raise SylkError("the model refused")

    plan = make_plan(node("a", metadata={"retry": {"max": 0}}))
    outcome = await DagScheduler(plan, run_node).run()
    assert outcome.records["a"].error == "SylkError: the model refused"


async def test_an_attempt_past_its_time_limit_fails_and_is_retried() -> None:
    plan = make_plan(node("a", metadata={"timeout_ms": 20, "retry": {"max": 1, "backoff_ms": 0}}))
    runner, events = ScriptedRunner(), EventLog()
    runner.hang.add("a")
    outcome = await finishes(DagScheduler(plan, runner, on_event=events).run(), what="the DAG")
    assert outcome.records["a"].status is NodeStatus.FAILED
    assert outcome.records["a"].error == "timed out after 0.02 s"
    assert events.statuses("a") == ["pending", "running", "retrying", "running", "failed"]
    assert runner.cancelled == ["a", "a"]  # each attempt was stopped, not left running


async def test_fail_fast_cancels_running_nodes_and_skips_the_rest(
    loop_errors: list[dict[str, Any]],
) -> None:
    plan = make_plan(
        node("bad", metadata={"retry": {"max": 0}}),
        node("busy"),
        node("after_busy", "busy"),
        node("queued"),
        max_concurrency=2,
    )
    runner, events = ScriptedRunner(), EventLog()
    runner.gate("bad", "busy")
    runner.fail_times["bad"] = 1
    run = asyncio.create_task(DagScheduler(plan, runner, on_event=events).run())
    await until(lambda: runner.running == 2)
    runner.open("bad")
    outcome = await finishes(run, what="the DAG")
    assert outcome.status is DagStatus.FAILED
    assert outcome.with_status(NodeStatus.FAILED) == ["bad"]
    assert outcome.with_status(NodeStatus.CANCELLED) == ["busy"]
    assert outcome.with_status(NodeStatus.SKIPPED) == ["after_busy", "queued"]
    assert runner.cancelled == ["busy"]
    assert events.statuses("queued") == ["pending", "skipped"]
    gc.collect()
    assert loop_errors == []


async def test_without_fail_fast_only_the_failed_node_s_dependants_are_skipped() -> None:
    plan = make_plan(
        node("bad", metadata={"retry": {"max": 0}}),
        node("child", "bad"),
        node("grandchild", "child"),
        node("other"),
        node("after_other", "other"),
        fail_fast=False,
    )
    runner, events = ScriptedRunner(), EventLog()
    runner.fail_times["bad"] = 1
    outcome = await DagScheduler(plan, runner, on_event=events).run()
    assert outcome.status is DagStatus.FAILED
    assert outcome.with_status(NodeStatus.PASSED) == ["other", "after_other"]
    assert outcome.with_status(NodeStatus.SKIPPED) == ["child", "grandchild"]
    assert outcome.records["grandchild"].error == "upstream node 'bad' failed"
    assert events.statuses("child") == ["pending", "skipped"]


async def test_cancel_stops_the_dag_cleanly_and_run_returns_cancelled(
    loop_errors: list[dict[str, Any]],
) -> None:
    plan = make_plan(node("a"), node("b"), node("c", "a"), max_concurrency=2)
    runner, events = ScriptedRunner(), EventLog()
    runner.hang.update({"a", "b"})
    scheduler = DagScheduler(plan, runner, on_event=events)
    run = asyncio.create_task(scheduler.run())
    await until(lambda: runner.running == 2)
    scheduler.cancel()
    outcome = await finishes(run, what="the cancelled DAG")
    assert outcome.status is DagStatus.CANCELLED
    assert outcome.with_status(NodeStatus.CANCELLED) == ["a", "b", "c"]
    assert sorted(runner.cancelled) == ["a", "b"] and runner.running == 0
    assert events.statuses("c") == ["pending", "cancelled"]
    gc.collect()
    assert loop_errors == []


async def test_cancelling_the_task_that_runs_the_dag_cancels_every_node_then_reraises(
    loop_errors: list[dict[str, Any]],
) -> None:
    plan = make_plan(*(node(f"n{i}") for i in range(6)), max_concurrency=3)
    runner = ScriptedRunner()
    runner.hang.update(f"n{i}" for i in range(6))
    scheduler = DagScheduler(plan, runner)
    run = asyncio.create_task(scheduler.run())
    await until(lambda: runner.running == 3)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert runner.running == 0 and len(runner.cancelled) == 3
    assert {r.status for r in scheduler.records.values()} == {NodeStatus.CANCELLED}
    gc.collect()
    assert loop_errors == []


async def test_a_runner_that_cancels_itself_does_not_leave_its_dependants_waiting() -> None:
    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        if node.id == "a":
            raise asyncio.CancelledError
        return NodeResult.passed()

    plan = make_plan(node("a"), node("b", "a"), node("c"), fail_fast=False)
    outcome = await finishes(DagScheduler(plan, run_node).run(), what="the DAG")
    assert outcome.status is DagStatus.FAILED
    assert [outcome.records[n].status for n in "abc"] == [
        NodeStatus.CANCELLED,
        NodeStatus.SKIPPED,
        NodeStatus.PASSED,
    ]


async def test_cancel_before_run_starts_nothing() -> None:
    runner = ScriptedRunner()
    scheduler = DagScheduler(make_plan(node("a")), runner)
    scheduler.cancel()
    outcome = await scheduler.run()
    assert (outcome.status, runner.started) == (DagStatus.CANCELLED, [])


async def test_time_limits_of_different_lengths_each_hold() -> None:
    plan = make_plan(
        node("long", metadata={"timeout_ms": 60_000}),
        node("short", metadata={"timeout_ms": 20, "retry": {"max": 0}}),
        node("after_long", "long", metadata={"timeout_ms": 30_000}),
        fail_fast=False,
    )
    runner = ScriptedRunner()
    runner.gate("long")
    runner.hang.add("short")
    run = asyncio.create_task(DagScheduler(plan, runner).run())
    await until(lambda: runner.cancelled == ["short"])  # the later, shorter limit struck first
    assert runner.running == 1  # long still runs: its limit is a minute away
    runner.open("long")
    outcome = await finishes(run, what="the DAG")
    assert outcome.with_status(NodeStatus.PASSED) == ["long", "after_long"]
    assert outcome.records["short"].error == "timed out after 0.02 s"


async def test_a_runner_that_swallows_its_timeout_is_still_timed_out() -> None:
    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        with contextlib.suppress(asyncio.CancelledError):  # an untrusted runner ignoring it
            await asyncio.Event().wait()
        return NodeResult.passed("late")

    plan = make_plan(node("a", metadata={"timeout_ms": 10, "retry": {"max": 0}}), node("b", "a"))
    outcome = await finishes(DagScheduler(plan, run_node).run(), what="the DAG")
    assert outcome.records["a"].error == "timed out after 0.01 s"
    assert outcome.records["b"].status is NodeStatus.SKIPPED


async def test_a_node_s_time_limit_can_be_given_per_node() -> None:
    """What the engine does for an engineer node run as a pipeline: its timeout covers each
    loop, so the whole pipeline gets three; the message names the limit applied."""
    plan = make_plan(node("a", metadata={"timeout_ms": 20, "retry": {"max": 0}}))
    runner = ScriptedRunner()
    runner.hang.add("a")
    limits = DagScheduler(plan, runner, time_limit=lambda n: n.metadata.timeout_ms / 1000 * 3)
    outcome = await finishes(limits.run(), what="the DAG")
    assert outcome.records["a"].error == "timed out after 0.06 s"
