"""A plan checked as a graph: ids, agents, dependencies, cycles and layers.

:func:`validate_plan` turns a :class:`~backend.plans.models.Plan` (fields already
in shape) into a :class:`~backend.plans.validated_plan.ValidatedPlan`, or raises a
:class:`~backend.plans.errors.PlanError` listing every problem it found:

* an empty plan (nothing else is checked then);
* two nodes with one id; an agent not in ``backend.roles.AGENT_ROLES`` (with the
  closest real one); a node depending on itself, on a node that is not there, or on
  one node twice; a ``context.upstream_outputs`` entry that is not an ancestor, so
  its output could not exist when the node starts;
* every dependency cycle, named along ``depends_on``: ``a -> b -> c -> a`` reads
  "a depends on b, b on c, c on a";
* an ``execution_order`` that is not the plan's layering (see below).

The layering is Kahn's: layer 0 holds the nodes without dependencies, layer *k* the
nodes whose dependencies are all in earlier layers, each layer in document order.
When the plan gives ``execution_order`` it must be exactly that, order within a layer
aside. A looser order (an independent node pushed to a later layer) is refused rather
than half honoured: the scheduler starts a node when its dependencies have passed, so
ordering that matters must be said in ``depends_on``, where it is enforced.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Sequence
from typing import Any

from backend.plans.errors import PlanProblem, ProblemCode, error_for
from backend.plans.models import Plan
from backend.plans.validated_plan import ValidatedPlan
from backend.roles import AGENT_ROLES

Edges = dict[str, list[str]]  # node id -> the ids it depends on (known, deduplicated)


def validate_plan(plan: Plan, *, agents: Sequence[str] = AGENT_ROLES) -> ValidatedPlan:
    """``plan`` as a runnable graph, or a :class:`PlanError` naming every problem."""
    if not plan.nodes:
        problem = PlanProblem(ProblemCode.EMPTY_PLAN, "nodes", "the plan has no nodes")
        raise error_for([problem])
    index: dict[str, int] = {}
    problems = _node_problems(plan, agents, index)
    edges, edge_problems = _edges(plan, index)
    problems += edge_problems
    cycles = _cycles(edges, index)
    problems += [
        PlanProblem(
            ProblemCode.CYCLE,
            f"nodes[{index[cycle[0]]}].depends_on",
            f"dependency cycle: {' -> '.join(cycle)} (each depends on the next)",
            {"cycle": cycle},
        )
        for cycle in cycles
    ]
    if cycles:
        raise error_for(problems)
    layers = _layers(edges, index)
    layer_of = {node_id: n for n, layer in enumerate(layers) for node_id in layer}
    problems += _upstream_problems(plan, edges, index, layers)
    if plan.execution_order is not None:
        problems += _order_problems(plan.execution_order, index, layer_of)
    if problems:
        raise error_for(problems)
    return ValidatedPlan.build(plan, layers, edges)


def _node_problems(plan: Plan, agents: Sequence[str], index: dict[str, int]) -> list[PlanProblem]:
    """Duplicate ids and unknown agents; fills ``index`` with each id's first position."""
    problems: list[PlanProblem] = []
    for i, node in enumerate(plan.nodes):
        if node.id in index:
            first = index[node.id]
            problems.append(
                PlanProblem(
                    ProblemCode.DUPLICATE_ID,
                    f"nodes[{i}].id",
                    f"id {node.id!r} is already the id of nodes[{first}]",
                    {"node_id": node.id, "first": first},
                )
            )
        else:
            index[node.id] = i
        if node.agent not in agents:
            near = difflib.get_close_matches(node.agent.lower(), agents, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            problems.append(
                PlanProblem(
                    ProblemCode.UNKNOWN_AGENT,
                    f"nodes[{i}].agent",
                    f"unknown agent {node.agent!r}{hint}; agents: {', '.join(agents)}",
                    {"node_id": node.id, "agent": node.agent, "known": list(agents)},
                )
            )
    return problems


def _edges(plan: Plan, index: dict[str, int]) -> tuple[Edges, list[PlanProblem]]:
    """Each node's usable dependencies, and the problems with the rest."""
    edges: Edges = {}
    problems: list[PlanProblem] = []
    for i, node in enumerate(plan.nodes):
        if index[node.id] != i:
            continue  # a duplicate: already reported, its edges would be ambiguous
        deps: list[str] = []
        for k, dep in enumerate(node.depends_on):
            path = f"nodes[{i}].depends_on[{k}]"
            fields = {"node_id": node.id, "dependency": dep}
            if dep == node.id:
                message = f"{node.id!r} depends on itself"
                problems.append(PlanProblem(ProblemCode.SELF_DEPENDENCY, path, message, fields))
            elif dep not in index:
                message = f"depends on {dep!r}, which is not a node of this plan"
                problems.append(PlanProblem(ProblemCode.MISSING_DEPENDENCY, path, message, fields))
            elif dep in deps:
                message = f"lists {dep!r} twice"
                problems.append(PlanProblem(ProblemCode.BAD_FIELD, path, message, fields))
            else:
                deps.append(dep)
        edges[node.id] = deps
    return edges, problems


def _cycles(edges: Edges, index: dict[str, int]) -> list[list[str]]:
    """One named cycle per strongly connected component (Tarjan's, without recursion)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(_ring(component, edges, index))
    return sorted(found, key=lambda ring: index[ring[0]])


def _ring(component: set[str], edges: Edges, index: dict[str, int]) -> list[str]:
    """The shortest cycle through the component's first node (in document order)."""
    start = min(component, key=index.__getitem__)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for dep in edges[node]:
            if dep == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if dep in component and dep not in came_from:
                came_from[dep] = node
                queue.append(dep)
    raise AssertionError("a strongly connected component always holds a cycle")


def _layers(edges: Edges, index: dict[str, int]) -> list[list[str]]:
    """Kahn's layering of an acyclic graph, each layer in document order."""
    waiting = {node: len(deps) for node, deps in edges.items()}
    dependants: dict[str, list[str]] = {node: [] for node in edges}
    for node, deps in edges.items():
        for dep in deps:
            dependants[dep].append(node)
    layer = [node for node, n in waiting.items() if n == 0]
    layers: list[list[str]] = []
    while layer:
        layers.append(layer)
        following: list[str] = []
        for node in layer:
            for child in dependants[node]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    following.append(child)
        layer = sorted(following, key=index.__getitem__)
    return layers


def _upstream_problems(
    plan: Plan, edges: Edges, index: dict[str, int], layers: list[list[str]]
) -> list[PlanProblem]:
    """``context.upstream_outputs`` may name only ancestors: their output exists in time."""
    ancestors: dict[str, int] | None = None  # bit sets over document positions, when needed
    problems: list[PlanProblem] = []
    for i, node in enumerate(plan.nodes):
        if index[node.id] != i:
            continue  # a duplicate: already reported
        for k, source in enumerate(node.context.upstream_outputs):
            if source in edges[node.id]:
                continue
            if ancestors is None:
                ancestors = _ancestor_bits(edges, index, layers)
            known = source in index
            if known and ancestors[node.id] >> index[source] & 1:
                continue
            reason = "is not upstream of it" if known else "is not a node of this plan"
            problems.append(
                PlanProblem(
                    ProblemCode.MISSING_DEPENDENCY,
                    f"nodes[{i}].context.upstream_outputs[{k}]",
                    f"reads the output of {source!r}, which {reason}",
                    {"node_id": node.id, "dependency": source},
                )
            )
    return problems


def _ancestor_bits(edges: Edges, index: dict[str, int], layers: list[list[str]]) -> dict[str, int]:
    """Each node's ancestors as a bit set over document positions (one pass, in layers)."""
    bits: dict[str, int] = {}
    for layer in layers:
        for node in layer:
            mask = 0
            for dep in edges[node]:
                mask |= bits[dep] | 1 << index[dep]
            bits[node] = mask
    return bits


def _order_problems(
    given: list[list[str]], index: dict[str, int], layer_of: dict[str, int]
) -> list[PlanProblem]:
    """Each node in exactly one layer, the layer its dependencies give it."""
    order = ProblemCode.EXECUTION_ORDER
    problems: list[PlanProblem] = []
    placed: dict[str, int] = {}
    for n, layer in enumerate(given):
        if not layer:
            message = "an empty layer"
            problems.append(PlanProblem(order, f"execution_order[{n}]", message))
        for k, node_id in enumerate(layer):
            path = f"execution_order[{n}][{k}]"
            if node_id not in index:
                message = f"names {node_id!r}, which is not a node of this plan"
            elif node_id in placed:
                message = f"lists {node_id!r} again (already in execution_order[{placed[node_id]}])"
            else:
                placed[node_id] = n
                continue
            fields: dict[str, Any] = {"node_id": node_id}
            problems.append(PlanProblem(order, path, message, fields))
    for node_id in index:
        if node_id not in placed:
            message = f"leaves out {node_id!r} (depends_on puts it in layer {layer_of[node_id]})"
            fields = {"node_id": node_id, "expected_layer": layer_of[node_id]}
            problems.append(PlanProblem(order, "execution_order", message, fields))
    for node_id, n in placed.items():
        if n != layer_of[node_id]:
            message = (
                f"{node_id!r} is in layer {n}, but depends_on puts it in layer {layer_of[node_id]}"
            )
            fields = {"node_id": node_id, "layer": n, "expected_layer": layer_of[node_id]}
            problems.append(PlanProblem(order, f"execution_order[{n}]", message, fields))
    return problems
