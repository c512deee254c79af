"""A DAG run again from its saved records runs only what did not pass before."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.orchestration import (
    DagScheduler,
    DagStatus,
    MemoryDagStateStore,
    NodeRecord,
    NodeResult,
    NodeStatus,
    OutputNotStorableError,
    SqliteDagStateStore,
)
from backend.plans import PlanNode, ValidatedPlan
from tests.unit.orchestration.dag_harness import EventLog, ScriptedRunner, make_plan, node


def _plan(prompt_of_c: str = "do c") -> ValidatedPlan:
    return make_plan(
        node("a"),
        node("b", "a"),
        {"id": "c", "agent": "engineer", "prompt": prompt_of_c, "depends_on": ["a"]},
        node("d", "b", "c"),
        node("e"),
        fail_fast=False,
        default_retry={"max": 0},
    )


async def test_a_second_run_skips_what_passed_and_feeds_its_saved_outputs_on() -> None:
    store = MemoryDagStateStore()
    first = ScriptedRunner()
    first.fail_times["c"] = 1
    outcome = await DagScheduler(_plan(), first, store=store).run()
    assert outcome.with_status(NodeStatus.PASSED) == ["a", "b", "e"]
    assert outcome.with_status(NodeStatus.SKIPPED) == ["d"]

    again, events = ScriptedRunner(), EventLog()
    outcome = await DagScheduler(_plan(), again, store=store, on_event=events).run()
    assert outcome.status is DagStatus.PASSED
    assert sorted(again.started) == ["c", "d"]
    assert again.upstream["c"] == {"a": "out-a"}  # from the store: a did not run again
    assert again.upstream["d"] == {"b": "out-b", "c": "out-c"}
    resumed = [(e.node_id, e.status.value) for e in events if e.resumed]
    assert resumed == [("a", "passed"), ("b", "passed"), ("e", "passed")]


async def test_a_node_changed_since_it_passed_runs_again_and_so_does_what_follows() -> None:
    store = MemoryDagStateStore()
    await DagScheduler(_plan(), ScriptedRunner(), store=store).run()
    again = ScriptedRunner()
    await DagScheduler(_plan("do c better"), again, store=store).run()
    assert sorted(again.started) == ["c", "d"]


async def test_a_node_that_passed_under_an_upstream_that_did_not_runs_again() -> None:
    store = MemoryDagStateStore()
    await DagScheduler(_plan(), ScriptedRunner(), store=store).run()
    a = (await store.load("plan-1"))["a"]
    await store.save("plan-1", "a", NodeRecord(NodeStatus.FAILED, 1, digest=a.digest))
    again = ScriptedRunner()
    await DagScheduler(_plan(), again, store=store).run()
    assert sorted(again.started) == ["a", "b", "c", "d"]  # e alone is independent of a


async def test_records_are_saved_as_nodes_start_and_end(tmp_path: Path) -> None:
    store = SqliteDagStateStore(tmp_path / "dags.sqlite")
    try:
        runner = ScriptedRunner()
        runner.fail_times["c"] = 1
        await DagScheduler(_plan(), runner, store=store).run()
        saved = await store.load("plan-1")
    finally:
        await store.aclose()
    assert {k: r.status.value for k, r in saved.items()} == {
        "a": "passed",
        "b": "passed",
        "c": "failed",
        "d": "skipped",
        "e": "passed",
    }
    assert saved["a"].output == "out-a" and saved["c"].error == "RuntimeError: c broke"


async def test_an_output_the_store_cannot_keep_stops_the_dag_with_a_typed_error(
    tmp_path: Path,
) -> None:
    async def run_node(node: PlanNode, upstream: object) -> NodeResult:
        return NodeResult.passed(object() if node.id == "a" else "fine")

    store = SqliteDagStateStore(tmp_path / "dags.sqlite")
    scheduler = DagScheduler(make_plan(node("a"), node("b", "a"), node("c")), run_node, store=store)
    try:
        with pytest.raises(OutputNotStorableError, match="node 'a' is not JSON"):
            await scheduler.run()
    finally:
        await store.aclose()
    assert scheduler.records["a"].status is NodeStatus.FAILED
    assert scheduler.records["b"].status is NodeStatus.SKIPPED
