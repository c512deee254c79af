"""A request for the Engineer outside a plan: a one-node pipeline, so its change is checked.

``@engineer TEXT`` (and any request the Guide routes to the Engineer) runs as a pipeline
of one task (``q1``, ``q2``, ... in the session): engineer -> inspector -> tester with
the feedback loops and the loop-limit question, exactly as a plan's engineer node runs.
The user sees the engineer's final answer, then a notice with one line of what the
checks found (passed, skipped, "nothing was checked" when the project has no linter or
test the checks could run). When the task failed, that line (failed, and why) is the
answer itself, marked as an error, so ``sylk run`` does not exit 0 on a change its
checks refused; when the engineer's turn itself failed, the turn's notice is.

While a plan's DAG runs in the session, or another task's pipeline does, a new request
for the Engineer is refused: a running pipeline's engineer is reached through
``/task ID prompt TEXT``, and two pipelines of one session editing at once would check
each other's half-made changes. ``engineer.task.execute`` is the same path for a model
or an MCP client, refused the same way, so an engineer inside a pipeline cannot start
another (no recursion).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from backend.errors import ErrorKind, SylkError
from backend.guide.routing.decision import RouteDecision
from backend.messages import Message, MessageType
from backend.pipelines.context import PipelineState
from backend.skills.builtin.engineer import TaskParams
from backend.skills.models import Handler, SkillContext
from backend.team.pipeline_desk import LiveTask, PipelineDesk, first_line

Record = Message[dict[str, Any]]
# (session_id, text, task_id or None) -> the task, once its pipeline ended
RunRequest = Callable[[str, str, str | None], Awaitable[LiveTask]]


class Notices(Protocol):
    async def notice(self, session_id: str, text: str, **extra: Any) -> Record: ...


class EngineerBusyError(SylkError):
    """A pipeline (a plan's, or another request's) runs in the session."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, message: str, running: list[str], *, plan_id: str | None) -> None:
        first = running[0] if running else "ID"
        super().__init__(
            message,
            help_hint=f"/task {first} prompt TEXT reaches a running task's engineer",
            details={"reason": "pipeline_running", "running": running, "plan_id": plan_id},
        )


class TaskIdTakenError(SylkError):
    error_kind = ErrorKind.CONFLICT

    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"task {task_id!r} already exists in this session: name the new task otherwise",
            help_hint=f"/task {task_id} query shows it",
            details={"reason": "task_id_taken", "task_id": task_id},
        )


def _turn_failed(record: Record) -> bool:
    """The engineer's turn did not answer (a notice), or ended early (stopped, errored)."""
    return record.type is MessageType.SYSTEM_NOTICE or record.payload.get("stop") not in (
        None, "final", "truncated")  # fmt: skip


class EngineerRequests:
    """``plan_running(session_id)`` names the plan whose DAG runs there, if one does."""

    def __init__(
        self,
        *,
        desk: PipelineDesk,
        run_request: RunRequest,
        plan_running: Callable[[str], str | None],
        sessions: Notices,
    ) -> None:
        self._desk = desk
        self._run_request = run_request
        self._plan_running = plan_running
        self._sessions = sessions

    def refusal(self, session_id: str) -> EngineerBusyError | None:
        """Why a new request for the Engineer cannot run in the session now, if it cannot."""
        running = self._desk.task_ids(session_id)
        plan_id = self._plan_running(session_id)
        if plan_id is not None:
            tasks = ", ".join(running) if running else "none at this moment"
            return EngineerBusyError(
                f"plan {plan_id}'s DAG runs in this session: its engineers take messages "
                f"through /task ID prompt TEXT (running tasks: {tasks}); @engineer works "
                "again once the plan ends",
                running,
                plan_id=plan_id,
            )
        if running:
            return EngineerBusyError(
                f"task {running[0]} runs in this session: /task {running[0]} prompt TEXT "
                "reaches its engineer; a new request waits until it ends",
                running,
                plan_id=None,
            )
        return None

    async def answer(self, session_id: str, decision: RouteDecision) -> Record:
        """The answer path's handler for requests to the Engineer (recorded as a notice)."""
        refused = self.refusal(session_id)
        if refused is not None:
            return await self._sessions.notice(
                session_id, str(refused), error=type(refused).__name__, agent="engineer"
            )
        try:
            task = await self._run_request(session_id, decision.text, None)
        except SylkError as error:
            return await self._sessions.notice(
                session_id, str(error), error=type(error).__name__, agent="engineer"
            )
        pipeline, last = task.pipeline, task.last_answer
        failed = pipeline.state is not PipelineState.COMPLETED
        if last is not None and failed and _turn_failed(last):
            return last  # the turn's own notice (or its stopped answer) says why
        context = pipeline.context
        about: dict[str, Any] = {
            "agent": "engineer", "pipeline": task.task_id, "state": pipeline.state.value,
            "loops": context.loop, "files": context.modified_files + context.created_files,
        }  # fmt: skip
        if failed:  # the answer: the task failed, and why
            return await self._sessions.notice(
                session_id, checks_line(task), error="PipelineFailed", **about
            )
        checked = await self._sessions.notice(session_id, checks_line(task), **about)
        return last if last is not None else checked

    async def execute(self, session_id: str, instructions: str, task_id: str) -> dict[str, Any]:
        """``engineer.task.execute``: the task as a one-node pipeline, run to its end."""
        refused = self.refusal(session_id)
        if refused is not None:
            raise refused
        if self._desk.known(session_id, task_id):
            raise TaskIdTakenError(task_id)
        task = await self._run_request(session_id, instructions, task_id)
        pipeline = task.pipeline
        context = pipeline.context
        return {
            "task_id": task.task_id,
            "state": pipeline.state.value,
            "success": pipeline.state.value == "completed",
            "reason": pipeline.reason,
            "loops": context.loop,
            "files": context.modified_files + context.created_files,
            "checks": checks_line(task),
            "answer": context.engineer_texts[-1] if context.engineer_texts else "",
            "notes": list(context.notes),
        }


def task_execute(requests: EngineerRequests) -> Handler:
    """``engineer.task.execute``: the task as a one-node pipeline in the caller's session."""

    async def execute(ctx: SkillContext, p: TaskParams) -> dict[str, Any]:
        return await requests.execute(ctx.session_id, p.instructions, p.task_id)

    return execute


def checks_line(task: LiveTask) -> str:
    """What the checks found, in one short line, for the answer of a one-node pipeline."""
    pipeline = task.pipeline
    label = f"Checks (task {task.task_id}, {pipeline.context.loop} loop(s))"
    if pipeline.state is PipelineState.FAILED:
        return f"{label}: failed — {first_line(pipeline.reason)}"
    inspection, tests = task.reports.inspection, task.reports.tests
    linted = inspection is not None and bool(inspection.tools_run)
    tested = tests is not None and tests.passed + tests.failed + tests.errors > 0
    if not linted and not tested and not pipeline.context.notes:
        return f"{label}: nothing was checked — no linter or test ran for this project."
    said = [f"{stage} {_verdict(task, stage)}" for stage in ("inspector", "tester")]
    return f"{label}: " + "; ".join(said)


def _verdict(task: LiveTask, stage: str) -> str:
    """One or two words on a stage of a pipeline that completed."""
    context = task.pipeline.context
    feedback = context.inspector_feedback if stage == "inspector" else context.tester_feedback
    if any(n.startswith(stage) for n in context.notes):
        return "skipped (deferred, see notes)" if feedback else "skipped"
    if not feedback:
        return "did not run"
    if stage == "inspector" and task.reports.inspection is not None:
        ran = sorted({run.tool for run in task.reports.inspection.tools_run})
        return f"passed ({', '.join(ran)})" if ran else "had nothing to run"
    tests = task.reports.tests
    if tests is not None and tests.passed + tests.failed + tests.errors:
        return f"passed ({tests.passed} test(s))"
    return "ran no test" + (f" ({tests.status})" if tests is not None else "")
