"""The app's side of the DAG view: plans' events onto the board, and its asks carried out.

A DAG's transitions and a pipeline's moves arrive as engine events and go straight to
the board (``screens.state.plan_view.PlanBoard``). The board needs a plan's document
once (its layers and dependencies): when the DAG view opens, or when a DAG of a plan the
board has not read moves; that read is a worker, one per session at a time. The
pipeline pane's keys become ``/task`` verbs through ``Engine.task_command``; what they
did is told by the engine's own notice, and a query's answer is shown as one.

Toasts about plans are kept to what needs the user's eye (a plan waits for approval, is
approved, a task fails or waits, the run ends) and to one per plan, at most
``PLAN_TOASTS_MAX`` at once: a newer toast about a plan replaces the older one, so a
plan's run never stacks a toast per step over the screen. Steps in between are the DAG
view's and the pipeline pane's to show (the engine marks them ``progress``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.notifications import Notification

from screens.state.plan_view import PlanBoard, PlanTraffic, ReadPlan, TaskVerb
from sylk_tui.engine_link.messages import DagMoved, EngineNoticePosted, PipelineChanged

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel

    from backend.archive.plan_book import StoredPlan
    from backend.events import DagStatusChanged
    from sylk_tui.engine_link.bridge import EngineBridge

PLAN_TOASTS_MAX = 2
"""Plan toasts shown at once (one per plan); a third withdraws the oldest."""
RUN_ENDS: dict[str, tuple[str, SeverityLevel]] = {
    "passed": ("completed", "information"),
    "failed": ("failed", "error"),
    "cancelled": ("cancelled", "warning"),
}
"""How a plan's DAG run ending is told (``DagStatusChanged`` with no node)."""
NOTICE_SEVERITY: dict[str, SeverityLevel] = {
    "info": "information",
    "warning": "warning",
    "error": "error",
}
"""An engine notice's level as a toast's severity."""


class PlanFollow:
    """Carries the plans' messages out for ``app``: events onto ``board``, asks to the engine."""

    def __init__(self, app: App[Any], bridge: EngineBridge, board: PlanBoard) -> None:
        self._app = app
        self._bridge = bridge
        self._board = board
        self._reading: set[str] = set()
        self._toasts: dict[str, Notification] = {}  # plan id -> its toast, oldest first

    def handle(self, traffic: PlanTraffic) -> None:
        match traffic:
            case DagMoved(event=event):
                if not self._board.dag_moved(event) and event.session_id:
                    self.read(event.session_id)
                if event.node_id is None and event.status in RUN_ENDS:
                    self._run_ended(event)
            case PipelineChanged(event=event):
                self._board.pipeline_moved(event)
            case ReadPlan(session_id=session_id):
                self.read(session_id)
            case TaskVerb():
                self._task_verb(traffic)

    def toast(self, notice: EngineNoticePosted) -> None:
        """Show ``notice``: about a plan, in place of that plan's toast still shown."""
        if notice.plan_id is None:
            self._app.notify(notice.text, severity=NOTICE_SEVERITY[notice.level], markup=False)
        else:
            self._plan_toast(notice.plan_id, notice.text, NOTICE_SEVERITY[notice.level])

    def _run_ended(self, event: DagStatusChanged) -> None:
        said, severity = RUN_ENDS[event.status]
        text = f"Plan {event.plan_id} (version {event.version}) {said}"
        self._plan_toast(event.plan_id, f"{text}: {event.error}" if event.error else text, severity)

    def _plan_toast(self, plan_id: str, text: str, severity: SeverityLevel) -> None:
        # Textual has no public way to withdraw one toast: this does what App.notify's
        # message does when handled, but at once, so the next notice sees this one shown.
        shown = self._app._notifications
        live = {key: toast for key, toast in self._toasts.items() if toast in shown}
        stale = [live.pop(plan_id)] if plan_id in live else []
        while len(live) >= PLAN_TOASTS_MAX:
            stale.append(live.pop(next(iter(live))))
        for toast in stale:
            del shown[toast]
        timeout = self._app.NOTIFICATION_TIMEOUT * (3 if severity == "error" else 1)
        live[plan_id] = Notification(text, "", severity, timeout, markup=False)
        self._toasts = live
        shown.add(live[plan_id])
        self._app._refresh_notifications()

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
