"""The plans the UI follows: each session's DAG, node by node, and its live pipelines.

The board is built from two things: a read when the DAG view first needs a plan (its
document for the layers and dependencies, and the DAG's node states), and from then on
the engine's events (``DagStatusChanged`` for the nodes, ``PipelineMoved`` for the
pipelines, which carries the pipeline's whole view), so nothing is read per frame. A
read and the events may cross: a node's state only moves forward (by attempt, then
from pending to running, retrying and an end), so a read that lands after a newer
event cannot take the node back. Nothing here talks to the engine or a widget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.dom import DOMNode
from textual.message import Message
from textual.signal import Signal

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.events import DagStatusChanged, PipelineMoved

ENDED = frozenset({"passed", "failed", "skipped", "cancelled"})
STEP = {"pending": 0, "running": 1, "retrying": 2}  # an end is 3
TASK_VERBS = ("prompt", "query", "interrupt", "ignore_inspector", "ignore_tester")
"""What ``/task ID VERB`` offers (``backend.team.pipeline_desk.VERBS``)."""


@dataclass
class NodeView:
    """One node of a plan, as the DAG view shows it."""

    id: str
    agent: str
    prompt: str = ""
    depends_on: list[str] = field(default_factory=list)
    status: str = "pending"
    attempt: int = 0
    max_attempts: int = 1
    duration_s: float | None = None
    running_since: datetime | None = None
    error: str | None = None

    @property
    def order(self) -> tuple[int, int]:
        return (self.attempt, 3 if self.status in ENDED else STEP.get(self.status, 0))


@dataclass
class PlanView:
    """A plan version of a session and the state of its DAG."""

    session_id: str
    plan_id: str
    version: int
    layers: list[list[str]]
    nodes: dict[str, NodeView]
    dag_id: str = ""
    status: str = "pending"


@dataclass
class PipelineView:
    """A pipeline of a session as its last ``PipelineMoved`` showed it."""

    task_id: str
    plan_id: str | None
    state: str
    loop: int
    max_loops: int
    data: dict[str, Any]


def layers_of(document: Mapping[str, Any]) -> list[list[str]]:
    """The plan's layers: its ``execution_order`` if it has one, else by dependencies."""
    nodes = [n for n in document.get("nodes", []) if isinstance(n, dict) and "id" in n]
    order = document.get("execution_order")
    known = {str(n["id"]) for n in nodes}
    if isinstance(order, list) and order:
        layers = [[str(i) for i in layer if str(i) in known] for layer in order]
        placed = {i for layer in layers for i in layer}
        if placed == known:
            return [layer for layer in layers if layer]
    depth: dict[str, int] = {}
    deps = {str(n["id"]): [str(d) for d in n.get("depends_on", []) if d in known] for n in nodes}
    for _ in range(len(deps) + 1):  # a cycle (never approved) just stops deepening
        for node_id, upstream in deps.items():
            depth[node_id] = 1 + max((depth.get(d, 0) for d in upstream), default=-1)
    layers = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for node_id in deps:
        layers[depth[node_id]].append(node_id)
    return layers


def plan_view(session_id: str, plan_id: str, version: int, document: Mapping[str, Any]) -> PlanView:
    """A plan's view from its document, every node pending."""
    nodes = {
        str(n["id"]): NodeView(
            id=str(n["id"]),
            agent=str(n.get("agent", "?")),
            prompt=str(n.get("prompt", "")),
            depends_on=[str(d) for d in n.get("depends_on", [])],
        )
        for n in document.get("nodes", [])
        if isinstance(n, dict) and "id" in n
    }
    return PlanView(session_id, plan_id, version, layers_of(document), nodes)


class PlanBoard:
    """Each session's latest plan with a DAG, and its pipelines; ``changed_signal``
    publishes the session whose plan or pipelines changed."""

    def __init__(self, owner: DOMNode, *, clock: Callable[[], datetime]) -> None:
        self.changed_signal: Signal[str] = Signal(owner, "plan-changed")
        self.clock = clock
        self._plans: dict[str, PlanView] = {}
        self._pipelines: dict[str, dict[str, PipelineView]] = {}
        self._unread: dict[str, list[DagStatusChanged]] = {}  # events of a plan not yet read

    def plan(self, session_id: str | None) -> PlanView | None:
        return self._plans.get(session_id or "")

    def pipeline(self, session_id: str | None, task_id: str) -> PipelineView | None:
        return self._pipelines.get(session_id or "", {}).get(task_id)

    def knows(self, session_id: str, plan_id: str, version: int) -> bool:
        shown = self._plans.get(session_id)
        return shown is not None and (shown.plan_id, shown.version) == (plan_id, version)

    # -- what the app applies ----------------------------------------------------------
    def dag_moved(self, event: DagStatusChanged) -> bool:
        """Apply a DAG's transition; False when its plan must be read first (the event is
        kept and applied after the read)."""
        session_id = event.session_id or ""
        if not self.knows(session_id, event.plan_id, event.version):
            self._unread.setdefault(session_id, []).append(event)
            return False
        self._apply(self._plans[session_id], event)
        self.changed_signal.publish(session_id)
        return True

    def loaded(
        self, session_id: str, plan_id: str, version: int, document: Mapping[str, Any],
        summary: Mapping[str, Any] | None,
    ) -> None:  # fmt: skip
        """A plan read: its document and, if its DAG has run, ``Engine.dag_status``'s row."""
        view = self._plans.get(session_id)
        if view is None or (view.plan_id, view.version) != (plan_id, version):
            view = plan_view(session_id, plan_id, version, document)
            self._plans[session_id] = view
        if summary is not None:
            view.dag_id = str(summary.get("dag_id", view.dag_id))
            view.status = str(summary.get("status") or view.status)
            for row in summary.get("nodes", []):
                node = view.nodes.get(str(row.get("id")))
                if node is None:
                    continue
                attempts = int(row.get("attempts") or 0)
                self._move(node, str(row.get("status")), attempts,
                           duration_s=row.get("duration_s"), error=row.get("error"))  # fmt: skip
        for event in self._unread.pop(session_id, []):
            if (event.plan_id, event.version) == (plan_id, version):
                self._apply(view, event)
        self.changed_signal.publish(session_id)

    def pipeline_moved(self, event: PipelineMoved) -> None:
        session_id = event.session_id or ""
        self._pipelines.setdefault(session_id, {})[event.task_id] = PipelineView(
            event.task_id, event.plan_id, event.state, event.loop, event.max_loops, event.view
        )
        self.changed_signal.publish(session_id)

    # -- moving a node -------------------------------------------------------------------
    def _apply(self, view: PlanView, event: DagStatusChanged) -> None:
        if event.dag_id != view.dag_id:  # a new run (a resume): its attempts count anew
            view.dag_id = event.dag_id
            for each in view.nodes.values():
                each.attempt = -1  # whatever the new run says next stands
        if event.node_id is None:
            view.status = event.status
            return
        node = view.nodes.get(event.node_id)
        if node is None:
            return
        self._move(node, event.status, event.attempt,
                   duration_s=event.duration_s, error=event.error, at=event.at)  # fmt: skip
        node.max_attempts = max(event.max_attempts, 1)

    def _move(
        self, node: NodeView, status: str, attempt: int, *, duration_s: object = None,
        error: object = None, at: datetime | None = None,
    ) -> None:  # fmt: skip
        moved = NodeView(node.id, node.agent, status=status, attempt=attempt)
        if moved.order < node.order:
            return  # older than what the node already shows
        node.status, node.attempt = status, attempt
        node.duration_s = float(duration_s) if isinstance(duration_s, int | float) else None
        node.error = str(error) if error else None
        if status == "running":
            node.running_since = at or self.clock()
        elif status in ENDED:
            node.running_since = None


# -- what the DAG view and the pipeline pane ask the app ------------------------------
class PlanTraffic(Message):
    """The plans' messages: the app hands every one to its plan follower."""


@dataclass
class ReadPlan(PlanTraffic):
    """Read the session's newest plan that has a DAG (or else its newest plan)."""

    session_id: str


@dataclass
class TaskVerb(PlanTraffic):
    """``/task TASK_ID VERB [TEXT]`` on a pipeline of the session."""

    session_id: str
    task_id: str
    verb: str
    text: str = ""
