"""A plan that passed every check, with its graph worked out for whoever runs it.

Only :func:`backend.plans.graph.validate_plan` builds one; holding a
:class:`ValidatedPlan` means the plan is non-empty, acyclic, its ids unique, its
agents real and its dependencies present, so the scheduler does not check again.
It also answers the questions the scheduler asks of every node: which retry and
timeout apply (the precedence is in :mod:`backend.plans.models`), which outputs it
reads, which nodes wait for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from backend.plans.models import PRIORITY_RANK, NodeRetry, Plan, PlanNode, PlanPolicy


@dataclass(frozen=True, slots=True)
class ValidatedPlan:
    """A checked plan: the document, its layers, and each node's neighbours."""

    plan: Plan
    layers: tuple[tuple[str, ...], ...]
    nodes: Mapping[str, PlanNode]  # by id, in document order
    dependencies: Mapping[str, tuple[str, ...]]
    dependants: Mapping[str, tuple[str, ...]]
    layer_of: Mapping[str, int]
    upstream: Mapping[str, tuple[str, ...]]
    """Whose outputs each node is given: its dependencies, then the ancestors it names."""
    ready_key: Mapping[str, tuple[int, int, int]]
    """Which ready node starts first: higher priority, then earlier layer, then plan order."""

    @classmethod
    def build(
        cls, plan: Plan, layers: list[list[str]], edges: Mapping[str, list[str]]
    ) -> ValidatedPlan:
        dependants: dict[str, list[str]] = {node.id: [] for node in plan.nodes}
        for node_id, deps in edges.items():
            for dep in deps:
                dependants[dep].append(node_id)
        layer_of = {n: i for i, layer in enumerate(layers) for n in layer}
        upstream: dict[str, tuple[str, ...]] = {}
        ready_key: dict[str, tuple[int, int, int]] = {}
        for position, node in enumerate(plan.nodes):
            direct = tuple(edges[node.id])
            named = node.context.upstream_outputs
            upstream[node.id] = direct + tuple(n for n in dict.fromkeys(named) if n not in direct)
            rank = PRIORITY_RANK[node.metadata.priority]
            ready_key[node.id] = (-rank, layer_of[node.id], position)
        return cls(
            plan=plan,
            layers=tuple(tuple(layer) for layer in layers),
            nodes=MappingProxyType({node.id: node for node in plan.nodes}),
            dependencies=MappingProxyType({k: tuple(v) for k, v in edges.items()}),
            dependants=MappingProxyType({k: tuple(v) for k, v in dependants.items()}),
            layer_of=MappingProxyType(layer_of),
            upstream=MappingProxyType(upstream),
            ready_key=MappingProxyType(ready_key),
        )

    @property
    def id(self) -> str:
        return self.plan.id

    @property
    def policy(self) -> PlanPolicy:
        return self.plan.policy

    def retry_for(self, node_id: str) -> NodeRetry:
        """The node's own retry if it gives one, else the plan's ``default_retry``."""
        own = self.nodes[node_id].metadata.retry
        return own if own is not None else self.plan.policy.default_retry

    def timeout_s(self, node_id: str) -> float:
        """The time limit of one attempt of the node, in seconds."""
        return self.nodes[node_id].metadata.timeout_ms / 1000

    def document(self) -> dict[str, Any]:
        """The plan as a JSON-ready document with its ``execution_order`` filled in."""
        data = self.plan.model_dump(mode="json")
        data["execution_order"] = [list(layer) for layer in self.layers]
        return data
