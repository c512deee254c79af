"""The app's side of the DAG view: plans' events onto the board, and its asks carried out.

A DAG's transitions and a pipeline's moves arrive as engine events and go straight to
the board (``screens.state.plan_view.PlanBoard``). The board needs a plan's document
once (its layers and dependencies): when the DAG view opens, or when a DAG of a plan the
board has not read moves; that read is a worker, one per session at a time. The
pipeline pane's keys become ``/task`` verbs through ``Engine.task_command``; what they
did is told by the engine's own notice, and a query's answer is shown as one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from screens.state.plan_view import PlanBoard, PlanTraffic, ReadPlan, TaskVerb
from sylk_tui.engine_messages import DagMoved, PipelineChanged

if TYPE_CHECKING:
    from textual.app import App

    from backend.archive.plan_book import StoredPlan
    from sylk_tui.engine_bridge import EngineBridge


class PlanFollow:
    """Carries the plans' messages out for ``app``: events onto ``board``, asks to the engine."""

    def __init__(self, app: App[Any], bridge: EngineBridge, board: PlanBoard) -> None:
        self._app = app
        self._bridge = bridge
        self._board = board
        self._reading: set[str] = set()

    def handle(self, traffic: PlanTraffic) -> None:
        match traffic:
            case DagMoved(event=event):
                if not self._board.dag_moved(event) and event.session_id:
                    self.read(event.session_id)
            case PipelineChanged(event=event):
                self._board.pipeline_moved(event)
            case ReadPlan(session_id=session_id):
                self.read(session_id)
            case TaskVerb():
                self._task_verb(traffic)

    def read(self, session_id: str) -> None:
        """Read the session's plan and its DAG's state (once at a time per session)."""
        if session_id in self._reading:
            return
        self._reading.add(session_id)
        self._app.run_worker(
            self._read(session_id),
            group="plans",
            description="read the session's plan",
            exit_on_error=False,
        )

    async def _read(self, session_id: str) -> None:
        try:
            engine = await self._bridge.ready()
            plans = await engine.plans(session_id)
            dags = await engine.dag_status(session_id)
        finally:
            self._reading.discard(session_id)
        chosen = _newest_run(plans, dags)
        if chosen is not None:
            stored, summary = chosen
            self._board.loaded(session_id, stored.plan_id, stored.version, stored.document, summary)

    def _task_verb(self, verb: TaskVerb) -> None:
        async def call() -> None:
            engine = await self._bridge.ready()
            args = {"task_id": verb.task_id, "verb": verb.verb, "text": verb.text}
            answer = await engine.task_command(verb.session_id, args)
            if verb.verb == "query":  # the other verbs' answers come as the engine's notices
                self._app.notify(answer, title=f"Task {verb.task_id}", markup=False, timeout=15)

        self._app.run_worker(
            call(), group="task", description=f"/task {verb.verb}", exit_on_error=False
        )


def _newest_run(
    plans: list[StoredPlan], dags: list[dict[str, Any]]
) -> tuple[StoredPlan, dict[str, Any] | None] | None:
    """The plan version whose DAG started last, with its status row; with no DAG yet, the
    newest plan (its nodes all pending)."""
    by_version = {(p.plan_id, p.version): p for p in plans}
    runs = [d for d in dags if (d.get("plan_id"), d.get("version")) in by_version]
    if runs:
        newest = max(runs, key=lambda d: str(d.get("started_at", "")))
        return by_version[(newest["plan_id"], newest["version"])], newest
    return (plans[-1], None) if plans else None
