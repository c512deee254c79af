"""One node's pipeline: the engineer's turns, the inspector's issues, the tester's
failures, its loop counter, and the ``/task`` keys that steer it.

The screen hands it the pipeline's data (``PipelineMoved.view``, see
``backend.team.task_view``) or a line saying why there is none (a node of another agent
has no pipeline; one that ended before Sylk started is no longer in memory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

TEXT_MAX = 400  # characters of one engineer turn or finding shown
TASK_KEYS = "p prompt · q query · x interrupt · i skip inspector · t skip tester"


def _short(text: object, limit: int = TEXT_MAX) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _where(item: Mapping[str, Any]) -> str:
    where = str(item.get("file") or "")
    if item.get("line"):
        where += f":{item['line']}"
    return where


def pipeline_text(title: str, view: Mapping[str, Any] | None, note: str = "") -> Text:
    """The pane's whole text for the node ``title``."""
    text = Text()
    text.append(f"{title}\n", style="bold")
    if not view:
        text.append(note or "No pipeline for this node.", style="dim")
        return text
    state = str(view.get("state", "?"))
    text.append(f"{state} · loop {view.get('loop', 0)}/{view.get('max_loops', 3)}")
    if view.get("reason"):
        text.append(f" · {_short(view['reason'], 120)}", style="italic")
    text.append("\n")
    files: Sequence[str] = view.get("files") or []
    text.append("Files: " + (", ".join(files) if files else "none yet") + "\n", style="dim")
    _section(text, "Engineer", _engineer_lines(view))
    _section(text, "Inspector", _inspector_lines(view))
    _section(text, "Tester", _tester_lines(view))
    queued: Sequence[str] = view.get("queued") or []
    notes: Sequence[str] = view.get("notes") or []
    if queued:
        _section(text, "Your messages waiting", [_short(m) for m in queued])
    if notes:
        _section(text, "Notes", [_short(n) for n in notes])
    if not view.get("ended"):
        text.append(f"\n{TASK_KEYS}", style="dim")
    return text


def _section(text: Text, name: str, lines: Sequence[str]) -> None:
    text.append(f"\n{name}\n", style="bold underline")
    for line in lines:
        text.append(f"  {line}\n")


def _engineer_lines(view: Mapping[str, Any]) -> list[str]:
    turns: Sequence[str] = view.get("engineer_texts") or []
    if not turns:
        return ["no turn yet"]
    return [f"{n}. {_short(turn)}" for n, turn in enumerate(turns, 1)]


def _inspector_lines(view: Mapping[str, Any]) -> list[str]:
    verdicts: Sequence[Mapping[str, Any]] = view.get("inspector") or []
    skipped = "inspector" in (view.get("ignored") or [])
    if not verdicts:
        return ["skipped" if skipped else "not run yet"]
    lines = []
    for verdict in verdicts:
        issues: Sequence[Mapping[str, Any]] = verdict.get("issues") or []
        passed = "passed" if verdict.get("passed") else f"failed ({len(issues)} issue(s))"
        lines.append(f"loop {verdict.get('loop')}: {passed}")
        for issue in issues:
            code = f"[{issue.get('tool')} {issue.get('code')}]".replace(" ]", "]")
            lines.append(f"  {_where(issue)} {code} {_short(issue.get('message', ''), 160)}")
        for run in verdict.get("failed_runs") or []:
            lines.append(f"  {run.get('tool')}: {run.get('status')} {_short(run.get('detail'))}")
    if skipped:
        lines.append("now skipped (/task ignore_inspector)")
    return lines


def _tester_lines(view: Mapping[str, Any]) -> list[str]:
    verdicts: Sequence[Mapping[str, Any]] = view.get("tester") or []
    skipped = "tester" in (view.get("ignored") or [])
    if not verdicts:
        return ["skipped" if skipped else "not run yet"]
    lines = []
    for verdict in verdicts:
        run, ok = verdict.get("tests_run", 0), verdict.get("tests_passed", 0)
        passed = "passed" if verdict.get("passed") else "failed"
        lines.append(f"loop {verdict.get('loop')}: {passed} ({verdict.get('status')}, {ok}/{run})")
        for failure in verdict.get("failures") or []:
            where = _where(failure)
            lines.append(f"  {failure.get('name')} {where} {_short(failure.get('message'), 160)}")
    if skipped:
        lines.append("now skipped (/task ignore_tester)")
    return lines


class PipelinePane(VerticalScroll):
    """Shows one node's pipeline; ``show`` replaces what it shows."""

    DEFAULT_CSS = """
    PipelinePane { height: 1fr; padding: 0 1; }
    PipelinePane > Static { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.node_id: str | None = None
        self.text = Text()

    def compose(self) -> ComposeResult:
        yield Static(id="pipeline-body")

    def show(
        self, node_id: str, title: str, view: Mapping[str, Any] | None, note: str = ""
    ) -> None:
        self.node_id = node_id
        self.text = pipeline_text(title, view, note)
        self.query_one("#pipeline-body", Static).update(self.text)
