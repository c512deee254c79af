"""A plan's DAG drawn as its layers of nodes, one line a node, with a cursor.

The screen hands it rows (``GraphLayer`` of ``GraphNode``) and it draws them: a status
mark, the node's id and agent, its status, what it waits on, its attempts, loop and
duration. ``action_move`` moves the cursor and ``action_open`` asks to open the node's
pipeline (``DagGraph.Opened``); the screen binds the keys, so its help lists them. It
knows no engine and no plan: only what it is handed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.text import Text
from textual.containers import ScrollableContainer
from textual.geometry import Region, Size
from textual.message import Message
from textual.widget import Widget

STATUS_MARKS = {
    "pending": ("○", ""),
    "running": ("◐", "warning"),
    "retrying": ("↻", "warning"),
    "passed": ("●", "success"),
    "failed": ("✕", "error"),
    "skipped": ("⊘", ""),
    "cancelled": ("⊘", "error"),
}
"""Status -> its mark and the theme colour it is drawn in ("": dimmed)."""


@dataclass(frozen=True)
class GraphNode:
    """One node as drawn; the texts are ready to show ("" shows nothing)."""

    id: str
    agent: str
    status: str
    depends_on: tuple[str, ...] = ()
    attempts: str = ""  # "attempt 2/3"
    loop: str = ""  # "loop 2/3"
    duration: str = ""  # "12.3s"
    error: str = ""


@dataclass(frozen=True)
class GraphLayer:
    title: str
    nodes: tuple[GraphNode, ...] = field(default_factory=tuple)


class DagGraph(Widget, can_focus=True):
    """The layers and nodes of one DAG, and which node is selected."""

    DEFAULT_CSS = """
    DagGraph { height: auto; width: 1fr; padding: 0 1; }
    """

    @dataclass
    class Opened(Message):
        """Enter on a node: show its pipeline."""

        graph: DagGraph
        node_id: str

        @property
        def control(self) -> DagGraph:
            return self.graph

    @dataclass
    class Moved(Message):
        """The cursor moved to ``node_id``."""

        graph: DagGraph
        node_id: str

        @property
        def control(self) -> DagGraph:
            return self.graph

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.graph_layers: list[GraphLayer] = []
        self.cursor = 0

    @property
    def node_ids(self) -> list[str]:
        return [node.id for layer in self.graph_layers for node in layer.nodes]

    @property
    def selected(self) -> str | None:
        ids = self.node_ids
        return ids[self.cursor] if ids else None

    def show(self, layers: Sequence[GraphLayer]) -> None:
        """Draw ``layers``; the same node stays selected when it is still there."""
        was = self.selected
        self.graph_layers = list(layers)
        ids = self.node_ids
        self.cursor = ids.index(was) if was in ids else min(self.cursor, max(len(ids) - 1, 0))
        self.refresh(layout=True)

    def select(self, node_id: str) -> None:
        ids = self.node_ids
        if node_id in ids:
            self.cursor = ids.index(node_id)
            self._moved()

    def action_move(self, step: int) -> None:
        ids = self.node_ids
        if ids:
            self.cursor = max(0, min(len(ids) - 1, self.cursor + step))
            self._moved()

    def action_open(self) -> None:
        if self.selected is not None:
            self.post_message(self.Opened(self, self.selected))

    def _style(self, status: str) -> str:
        colour = STATUS_MARKS.get(status, ("?", ""))[1]
        value = getattr(self.app.current_theme, colour, None) if colour else None
        return f"bold {value}" if isinstance(value, str) else "dim"

    def _moved(self) -> None:
        self.refresh()
        container = self.parent
        if isinstance(container, ScrollableContainer):  # keep the cursor's line in sight
            line = self._line_of(self.cursor)
            container.scroll_to_region(Region(0, line, 1, 1), animate=False, immediate=True)
        if self.selected is not None:
            self.post_message(self.Moved(self, self.selected))

    def _line_of(self, index: int) -> int:
        line, seen = 0, 0
        for layer in self.graph_layers:
            line += 1
            if index < seen + len(layer.nodes):
                return line + index - seen
            seen += len(layer.nodes)
            line += len(layer.nodes)
        return line

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, sum(1 + len(layer.nodes) for layer in self.graph_layers))

    def render(self) -> Text:
        if not self.graph_layers:
            return Text("No plan has run in this session yet.", style="dim")
        nodes = [node for layer in self.graph_layers for node in layer.nodes]
        widths = (
            max(len(n.id) for n in nodes),
            max(len(n.agent) for n in nodes),
            max(len(n.status) for n in nodes),
            max(len(_waits(n)) for n in nodes),
        )
        width = max(self.content_size.width, 20)
        text = Text()
        index = 0
        for layer in self.graph_layers:
            title = Text(layer.title, style="bold")
            title.truncate(width, overflow="ellipsis")
            text.append_text(title)
            text.append("\n")
            for node in layer.nodes:
                line = self._node_line(node, widths, selected=index == self.cursor)
                line.truncate(width, overflow="ellipsis")
                text.append_text(line)
                text.append("\n")
                index += 1
        text.rstrip()
        return text

    def _node_line(
        self, node: GraphNode, widths: tuple[int, int, int, int], *, selected: bool
    ) -> Text:
        mark = STATUS_MARKS.get(node.status, ("?", ""))[0]
        style = self._style(node.status)
        id_width, agent_width, status_width, waits_width = widths
        line = Text(style="reverse" if selected and self.has_focus else "")
        line.append("▸ " if selected else "  ")
        line.append(f"{mark} ", style=style)
        line.append(f"{node.id:<{id_width}}  ", style="bold")
        line.append(f"{node.agent:<{agent_width}}  ")
        line.append(f"{node.status:<{status_width}}", style=style)
        if waits_width:
            line.append(f"  {_waits(node):<{waits_width}}")
        extras = [part for part in (node.attempts, node.loop, node.duration) if part]
        if extras:
            line.append("  " + " · ".join(extras))
        if node.error:
            line.append(f"  {node.error}", style="italic")
        return line


def _waits(node: GraphNode) -> str:
    return f"← {', '.join(node.depends_on)}" if node.depends_on else ""
