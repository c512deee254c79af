"""The DAG view: the session's plan as layers of nodes with live status, and one node's
pipeline beside it.

Opened from the main screen (ctrl+g). It reads the plan once (``ReadPlan``; the app
carries it out) and then follows the board (``screens.state.plan_view.PlanBoard``),
which the engine's DAG and pipeline events keep current: nothing is read per frame.
Up/down (j/k) select a node, Enter opens its pipeline; p, q, x, i and t are the
``/task`` verbs on the selected node's pipeline, posted as ``TaskVerb`` intents.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from screens.state.plan_view import NodeView, PlanBoard, PlanView, ReadPlan, TaskVerb
from widgets.dag_graph import DagGraph, GraphLayer, GraphNode
from widgets.pipeline_pane import PipelinePane

RUNNING_REFRESH_SECONDS = 1.0
"""How often a running node's duration is redrawn (a repaint, no read)."""


def _verb_binding(key: str, verb: str, label: str, tooltip: str) -> Binding:
    return Binding(key, f"task('{verb}')", label, id=f"dag.task-{verb.replace('_', '-')}",
                   tooltip=tooltip)  # fmt: skip


class DagViewScreen(Screen[None]):
    """The plan of one session, node by node; the selected node's pipeline on the right."""

    CSS_PATH = Path(__file__).with_name("dag_view.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "move(1)", "Next", show=False, id="dag.next-node",
                tooltip="Select the next task of the plan."),
        Binding("up,k", "move(-1)", "Previous", show=False, id="dag.previous-node",
                tooltip="Select the previous task of the plan."),
        Binding("enter", "open", "Pipeline", id="dag.open-node",
                tooltip="Open the selected task's pipeline: its steps, issues and failures."),
        Binding("escape", "back", "Back", id="dag.back",
                tooltip="Close the pipeline (or the prompt), else back to the transcript."),
        Binding("ctrl+g", "close", "Close", id="dag.close", priority=True,
                tooltip="Back to the transcript."),
        _verb_binding("p", "prompt", "Prompt",
                      "Send the selected task's engineer a message (read by its next turn)."),
        _verb_binding("q", "query", "Query", "Ask how the selected task stands (no model)."),
        _verb_binding("x", "interrupt", "Interrupt",
                      "Stop the selected task's pipeline: it fails, not retried."),
        _verb_binding("i", "ignore_inspector", "Skip inspector",
                      "Skip the selected task's inspector from its next check on."),
        _verb_binding("t", "ignore_tester", "Skip tester",
                      "Skip the selected task's tester from its next check on."),
    ]  # fmt: skip

    def __init__(self, board: PlanBoard, session_id: str, *, session_name: str = "") -> None:
        super().__init__()
        self.board = board
        self.session_id = session_id
        self.session_name = session_name

    def compose(self) -> ComposeResult:
        yield Static(id="dag-title")
        with Horizontal(id="dag-body"):
            with VerticalScroll(id="dag-scroll"):
                yield DagGraph(id="dag-graph")
            yield PipelinePane(id="pipeline-pane")
        yield Input(id="task-input", placeholder="message for the task's engineer")
        yield Footer()

    def on_mount(self) -> None:
        self.pane.display = False
        self.query_one("#task-input", Input).display = False
        self.graph.focus()
        self.board.changed_signal.subscribe(self, self._changed)
        self.set_interval(RUNNING_REFRESH_SECONDS, self._tick)
        self._paint()
        self.post_message(ReadPlan(self.session_id))

    @property
    def graph(self) -> DagGraph:
        return self.query_one("#dag-graph", DagGraph)

    @property
    def pane(self) -> PipelinePane:
        return self.query_one("#pipeline-pane", PipelinePane)

    @property
    def plan(self) -> PlanView | None:
        return self.board.plan(self.session_id)

    # -- what the board says -----------------------------------------------------------
    def _changed(self, session_id: str) -> None:
        if session_id == self.session_id:
            self._paint()

    def _tick(self) -> None:
        plan = self.plan
        if plan is not None and any(n.status == "running" for n in plan.nodes.values()):
            self._paint()

    def _paint(self) -> None:
        plan = self.plan
        self.query_one("#dag-title", Static).update(self._title(plan))
        self.graph.show(self._layers(plan) if plan is not None else [])
        if self.pane.display and self.pane.node_id is not None:
            self._show_pipeline(self.pane.node_id)

    def _title(self, plan: PlanView | None) -> str:
        name = f"{self.session_name} · " if self.session_name else ""
        if plan is None:
            return f"{name}no plan yet · ctrl+g or esc goes back"
        counts = Counter(n.status for n in plan.nodes.values())
        done = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        return f"{name}Plan {plan.plan_id} v{plan.version} · {plan.status} · {done}"

    def _layers(self, plan: PlanView) -> list[GraphLayer]:
        layers = []
        for number, layer in enumerate(plan.layers, 1):
            together = " (together)" if len(layer) > 1 else ""
            nodes = tuple(self._node(plan, plan.nodes[i]) for i in layer if i in plan.nodes)
            layers.append(GraphLayer(f"Layer {number}{together}", nodes))
        return layers

    def _node(self, plan: PlanView, node: NodeView) -> GraphNode:
        attempts = f"attempt {node.attempt}/{node.max_attempts}" if node.attempt > 1 else ""
        if node.status == "retrying":
            attempts = f"attempt {node.attempt}/{node.max_attempts} failed"
        pipeline = self.board.pipeline(self.session_id, node.id)
        loop = ""
        if pipeline is not None and pipeline.plan_id == plan.plan_id:
            loop = f"loop {pipeline.loop}/{pipeline.max_loops}"
        duration = f"{node.duration_s:.1f}s" if node.duration_s is not None else ""
        if node.status == "running" and node.running_since is not None:
            elapsed = (self.board.clock() - node.running_since).total_seconds()
            duration = f"{max(elapsed, 0):.0f}s so far"
        error = (node.error or "").strip().splitlines()[0][:80] if node.error else ""
        return GraphNode(node.id, node.agent, node.status, tuple(node.depends_on),
                         attempts, loop, duration, error)  # fmt: skip

    # -- the pipeline pane -------------------------------------------------------------
    @on(DagGraph.Opened)
    def _opened(self, opened: DagGraph.Opened) -> None:
        opened.stop()
        self.pane.display = True
        self._show_pipeline(opened.node_id)

    @on(DagGraph.Moved)
    def _moved(self, moved: DagGraph.Moved) -> None:
        moved.stop()
        if self.pane.display:
            self._show_pipeline(moved.node_id)

    def _show_pipeline(self, node_id: str) -> None:
        plan = self.plan
        node = plan.nodes.get(node_id) if plan is not None else None
        if plan is None or node is None:
            return
        title = f"Task {node.id} · {node.agent} · {node.status}\n{node.prompt}".rstrip()
        pipeline = self.board.pipeline(self.session_id, node_id)
        view = pipeline.data if pipeline is not None and pipeline.plan_id == plan.plan_id else None
        self.pane.show(node_id, title, view, self._no_pipeline(node))

    @staticmethod
    def _no_pipeline(node: NodeView) -> str:
        if node.agent != "engineer":
            return f"A {node.agent} node answers in one turn: it has no pipeline."
        if node.status == "pending":
            return "Its pipeline starts when the node runs."
        return f"Its pipeline ran before Sylk started; /task {node.id} query may know it."

    # -- actions -------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        self.graph.action_move(step)

    def action_open(self) -> None:
        self.graph.action_open()

    def action_back(self) -> None:
        field = self.query_one("#task-input", Input)
        if field.display:
            field.display = False
            self.graph.focus()
        elif self.pane.display:
            self.pane.display = False
            self.graph.focus()
        else:
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_task(self, verb: str) -> None:
        node_id = self.graph.selected
        if node_id is None:
            self.notify("No node is selected.", severity="warning", markup=False)
            return
        if verb == "prompt":
            field = self.query_one("#task-input", Input)
            field.display = True
            field.border_title = f"message for task {node_id}"
            field.focus()
            return
        self.post_message(TaskVerb(self.session_id, node_id, verb))

    @on(Input.Submitted, "#task-input")
    def _prompt_submitted(self, submitted: Input.Submitted) -> None:
        submitted.stop()
        field = submitted.input
        node_id = self.graph.selected
        if submitted.value.strip() and node_id is not None:
            self.post_message(TaskVerb(self.session_id, node_id, "prompt", submitted.value))
        field.value = ""
        field.display = False
        self.graph.focus()
