"""A scripted node runner and an event log for the scheduler tests.

:class:`ScriptedRunner` runs nodes as real coroutines on the test's loop: a node may be
told to fail N times, to hang until its gate opens, or to hang for ever; the runner
counts how many nodes run at once and records what each node was given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from backend.orchestration import NodeEvent, NodeResult
from backend.plans import PlanNode, ValidatedPlan, load_plan
from tests.unit.plans.plan_data import node, plan

__all__ = ["EventLog", "ScriptedRunner", "make_plan", "node"]


def make_plan(*nodes: dict[str, Any], **policy: Any) -> ValidatedPlan:
    return load_plan(plan(*nodes, policy=policy))


class ScriptedRunner:
    def __init__(self) -> None:
        self.fail_times: dict[str, int] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.hang: set[str] = set()
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.upstream: dict[str, dict[str, Any]] = {}
        self.running = 0
        self.peak = 0

    def gate(self, *node_ids: str) -> None:
        for node_id in node_ids:
            self.gates[node_id] = asyncio.Event()

    def open(self, *node_ids: str) -> None:
        for node_id in node_ids:
            self.gates[node_id].set()

    async def __call__(self, node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        self.started.append(node.id)
        self.upstream[node.id] = dict(upstream)
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if node.id in self.hang:
                await asyncio.Event().wait()
            if node.id in self.gates:
                await self.gates[node.id].wait()
            else:
                await asyncio.sleep(0)
            if self.fail_times.get(node.id, 0) > 0:
                self.fail_times[node.id] -= 1
                raise RuntimeError(f"{node.id} broke")
            self.finished.append(node.id)
            return NodeResult.passed(f"out-{node.id}")
        except asyncio.CancelledError:
            self.cancelled.append(node.id)
            raise
        finally:
            self.running -= 1


class EventLog(list[NodeEvent]):
    def __call__(self, event: NodeEvent) -> None:
        self.append(event)

    def of(self, node_id: str) -> list[tuple[str, int]]:
        return [(e.status.value, e.attempt) for e in self if e.node_id == node_id]

    def statuses(self, node_id: str) -> list[str]:
        return [e.status.value for e in self if e.node_id == node_id]
