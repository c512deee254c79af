"""The live pipelines of each session, and what ``/task ID VERB [TEXT]`` does to one.

The engine's pipeline work (:mod:`backend.engine.plan_runs.pipeline_work`) opens a task here when
its pipeline starts and closes it when it ends; the desk keeps the running ones by
session and task id, and the last few finished ones, so ``/task ID query`` still says
how a task ended. The verbs act on the pipeline itself (:class:`Pipeline`): ``prompt``
puts the user's text on the pipeline's bus to its engineer (drained into the next
engineer turn), ``interrupt`` cancels it (the node fails "interrupted"), and
``ignore_inspector`` / ``ignore_tester`` skip a stage from its next check on, noted
in the pipeline's notes so the completion can list the stage as deferred. ``query``
answers from the pipeline's state, without a model.

Every action is published as an :class:`EngineNotice`; the ``/task`` command's answer
is written to the transcript by the engine (``Engine.submit``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from backend.errors import ErrorKind, SylkError
from backend.events import EngineEvent, EngineNotice
from backend.guide.commands import PipelineNotFoundError
from backend.messages import Message, MessageType
from backend.pipelines.checks import InspectionReport, TestReport
from backend.pipelines.context import TERMINAL, PipelineState
from backend.pipelines.handoff.chain import HANDOFF_VERBS, HandoffChains
from backend.pipelines.pipeline import Pipeline
from backend.pipelines.pipeline_checks import PipelineChecker
from backend.roles import AGENT_ROLES
from backend.skills.builtin.guide import TaskParams
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Handler, SkillContext
from backend.team.task_view import pipeline_moved

VERBS = ("prompt", "query", "interrupt", "ignore_inspector", "ignore_tester", *HANDOFF_VERBS)
FINISHED_KEPT = 8  # finished tasks a session keeps for /task ID query
LINE_MAX = 200  # characters of one feedback line in a query's answer
FEEDBACK_LINES = 3
PIPELINE_ROLES = frozenset({"engineer", "inspector", "tester"})


class PipelineEndedError(SylkError):
    """The task's pipeline has ended: it takes no more messages or changes."""

    error_kind = ErrorKind.CONFLICT

    def __init__(self, task_id: str, state: str, verb: str) -> None:
        super().__init__(
            f"task {task_id} has ended ({state}): /task {verb} changes nothing now",
            help_hint=f"/task {task_id} query shows how it ended",
            details={"reason": "pipeline_ended", "task_id": task_id, "state": state},
        )


class TaskVerbError(SylkError):
    error_kind = ErrorKind.INVALID


@dataclass
class CheckReports:
    """The last report of each check, as the pipeline's checks ran them."""

    inspection: InspectionReport | None = None
    tests: TestReport | None = None


@dataclass
class LiveTask:
    """One pipeline of a session, as the desk keeps it."""

    session_id: str
    plan_id: str | None  # None: a one-node pipeline (``@engineer TEXT``)
    pipeline: Pipeline
    reports: CheckReports = field(default_factory=CheckReports)
    sent: list[str] = field(default_factory=list)  # /task prompt texts, in order
    last_answer: Message[dict[str, Any]] | None = None  # the engineer's last turn, recorded

    @property
    def task_id(self) -> str:
        return self.pipeline.task_id

    @property
    def label(self) -> str:
        return (
            f"Plan {self.plan_id}, task {self.task_id}" if self.plan_id else f"Task {self.task_id}"
        )

    @property
    def ended(self) -> bool:
        return self.pipeline.state in TERMINAL

    @property
    def queued(self) -> list[str]:
        """The user's messages sent that no engineer turn has read yet."""
        read = list(self.pipeline.context.user_messages)
        waiting = []
        for text in self.sent:
            if text in read:
                read.remove(text)
            else:
                waiting.append(text)
        return waiting


@dataclass(frozen=True)
class ReportedChecks:
    """A pipeline's checks that keep their last reports (for query and the summary
    line: which tools ran, whether anything was checked at all)."""

    inner: PipelineChecker
    reports: CheckReports

    async def inspect(self, files: Sequence[str]) -> InspectionReport:
        self.reports.inspection = await self.inner.inspect(files)
        return self.reports.inspection

    async def test(self, files: Sequence[str]) -> TestReport:
        self.reports.tests = await self.inner.test(files)
        return self.reports.tests


class PipelineDesk:
    """``cancel_turns(session_id)`` stops the session's running agent turns (an
    interrupted engineer's turn must stop editing); ``publish`` takes the notices."""

    def __init__(
        self,
        *,
        publish: Callable[[EngineEvent], None] | None = None,
        cancel_turns: Callable[[str], object] | None = None,
    ) -> None:
        self.publish = publish
        self.cancel_turns = cancel_turns
        self._running: dict[str, dict[str, LiveTask]] = {}
        self._finished: dict[str, deque[LiveTask]] = {}
        self._quick: dict[str, int] = {}
        self.handoffs: HandoffChains | None = None  # /task ID handoff|handoff_stop

    # -- the pipelines' side ---------------------------------------------------------
    def open(
        self,
        session_id: str,
        pipeline: Pipeline,
        *,
        plan_id: str | None = None,
        reports: CheckReports | None = None,
    ) -> LiveTask:
        task = LiveTask(session_id, plan_id, pipeline, reports or CheckReports())
        self._running.setdefault(session_id, {})[pipeline.task_id] = task
        return task

    def close(self, task: LiveTask) -> None:
        """The pipeline ended: kept among the session's finished tasks; a message no
        engineer turn read is noted (the checks passed before another turn ran)."""
        running = self._running.get(task.session_id, {})
        if running.get(task.task_id) is task:
            del running[task.task_id]
        if not running:
            self._running.pop(task.session_id, None)
        for text in task.queued:
            task.pipeline.context.notes.append(f"not read by the engineer (ended first): {text}")
        kept = self._finished.setdefault(task.session_id, deque(maxlen=FINISHED_KEPT))
        kept.append(task)

    def next_quick_id(self, session_id: str) -> str:
        """The id of the session's next one-node pipeline: q1, q2, ..."""
        number = self._quick.get(session_id, 0) + 1
        while self.known(session_id, f"q{number}"):
            number += 1
        self._quick[session_id] = number
        return f"q{number}"

    # -- reading ---------------------------------------------------------------------
    def running(self, session_id: str) -> list[LiveTask]:
        return list(self._running.get(session_id, {}).values())

    def task_ids(self, session_id: str) -> list[str]:
        return list(self._running.get(session_id, {}))

    def finished(self, session_id: str) -> list[LiveTask]:
        """The session's last finished tasks, oldest first (their notes: the completion's)."""
        return list(self._finished.get(session_id, ()))

    def known(self, session_id: str, task_id: str) -> bool:
        finished = self._finished.get(session_id, ())
        return task_id in self.task_ids(session_id) or any(t.task_id == task_id for t in finished)

    def find(self, session_id: str, task_id: str) -> LiveTask:
        """The running task, else the newest finished one with that id; a number that
        is no task's id counts the running tasks from 1."""
        running = self._running.get(session_id, {})
        task = running.get(task_id)
        if task is not None:
            return task
        for done in reversed(self._finished.get(session_id, ())):
            if done.task_id == task_id:
                return done
        if task_id.isdecimal() and 1 <= int(task_id) <= len(running):
            return list(running.values())[int(task_id) - 1]
        raise PipelineNotFoundError(task_id, self.task_ids(session_id))

    # -- /task -----------------------------------------------------------------------
    async def command(self, session_id: str, task_id: str, verb: str, text: str = "") -> str:
        """Carry out ``/task task_id verb [text]``; the answer for the user."""
        if verb not in VERBS:
            raise TaskVerbError(
                f"unknown /task verb {verb!r}", help_hint="verbs: " + ", ".join(VERBS)
            )
        task = self.find(session_id, task_id)
        if verb == "query":
            return query_text(task, text)
        if task.ended:
            raise PipelineEndedError(task_id, task.pipeline.state.value, verb)
        if verb == "prompt":
            answer = await self._prompt(task, text)
        elif verb == "interrupt":
            answer = self._interrupt(task)
        elif verb in HANDOFF_VERBS:
            if self.handoffs is None:
                raise TaskVerbError("this engine runs pipelines without handoffs")
            answer = self.handoffs.command(task.session_id, task.task_id, verb, task.label)
        else:
            answer = self._ignore(task, verb.removeprefix("ignore_"))
        self._notice(task, answer)
        return answer

    async def _prompt(self, task: LiveTask, text: str) -> str:
        text = text.strip()
        if not text:
            raise TaskVerbError("/task prompt needs the text to send", help_hint="/help task")
        pipeline = task.pipeline
        await pipeline.bus.send(
            Message[Any](
                session_id=pipeline.bus.session_id,
                source="user",
                target="engineer",
                type=MessageType.USER_INPUT,
                payload={"text": text},
            )
        )
        task.sent.append(text)
        loop, state = pipeline.context.loop, pipeline.state
        now = (
            "before its first turn" if state is PipelineState.CREATED else f"{state} (loop {loop})"
        )
        return (
            f"{task.label}: your message is queued for its engineer; it reaches the "
            f"engineer's next turn (loop {loop + 1} of {pipeline.max_loops}) — the pipeline "
            f"is {now}. If the checks pass first, no further turn runs and the message is "
            "noted as unread."
        )

    def _interrupt(self, task: LiveTask) -> str:
        pipeline = task.pipeline
        was = pipeline.state
        pipeline.cancel()
        if was is PipelineState.RUNNING and self.cancel_turns is not None:
            self.cancel_turns(task.session_id)  # the engineer's turn stops editing too
        after = " (the plan's DAG decides what follows)" if task.plan_id else ""
        return (
            f"{task.label}: interrupted while {was} (loop {pipeline.context.loop}); it "
            f"ends failed, reason interrupted, and is not retried{after}."
        )

    def _ignore(self, task: LiveTask, stage: str) -> str:
        pipeline = task.pipeline
        loop = pipeline.context.loop
        if getattr(pipeline, f"ignore_{stage}"):
            return f"{task.label}: the {stage} is already skipped."
        setattr(pipeline, f"ignore_{stage}", True)
        pipeline.context.notes.append(f"{stage} checks skipped by the user (/task) at loop {loop}")
        return f"{task.label}: the {stage} is skipped from its next check on (deferred, noted)."

    def _notice(self, task: LiveTask, text: str) -> None:
        if self.publish is not None:
            self.publish(EngineNotice(session_id=task.session_id, text=text))
            self.publish(pipeline_moved(task))  # a pane shows the queued message, the skip


def task_interact(desk: PipelineDesk) -> Handler:
    """``guide.task.interact``: ``/task`` for a model or an MCP client, in its session."""

    async def interact(ctx: SkillContext, p: TaskParams) -> dict[str, Any]:
        refused = _not_for(ctx.agent, p.action)
        if refused:
            raise SkillError(
                ErrorCode.ACCESS_DENIED, refused, help_path="guide.task.interact",
                details={"reason": "not_for_agents", "agent": ctx.agent, "action": p.action},
            )  # fmt: skip
        answer = await desk.command(ctx.session_id, p.pipeline_id, p.action, p.message or "")
        return {"task_id": p.pipeline_id, "action": p.action, "answer": answer}

    return interact


def _not_for(agent: str, action: str) -> str:
    """Why Sylk's own ``agent`` may not do ``action`` to a pipeline ("" if it may).

    A pipeline's own roles may only ask how it stands: an engineer that could interrupt
    or re-prompt its task, or skip its checks, would grade its own work. Skipping a check
    is the user's call (``/task ID ignore_...``, or their own MCP client), never a model's.
    """
    if agent not in AGENT_ROLES or action == "query":
        return ""
    if action.startswith("ignore_"):
        return f"only the user skips a pipeline's check (/task ID {action}), not the {agent}"
    if agent in PIPELINE_ROLES:
        return f"the {agent} works inside pipelines: it may query one, not {action} it"
    return ""


# -- what a task is doing, in words ----------------------------------------------------
def query_text(task: LiveTask, question: str = "") -> str:
    """The task's state from its pipeline: honest and useful without a model."""
    pipeline = task.pipeline
    context = pipeline.context
    loops = f"loop {context.loop}/{pipeline.max_loops}"
    head = f"{task.label}: {pipeline.state} ({loops})"
    if task.ended and pipeline.reason:
        head += f" — {first_line(pipeline.reason)}"
    lines = [head]
    if question.strip():
        lines.append(f"(asked: {first_line(question)}; answered from the pipeline's state)")
    lines.append(f"Task: {first_line(context.task_prompt)}")
    files = context.modified_files + context.created_files
    lines.append("Files touched: " + (", ".join(files) if files else "none yet"))
    for stage in ("inspector", "tester"):
        lines.append(f"{stage.capitalize()}: {stage_line(task, stage)}")
    if task.queued:
        lines.append(f"Your messages waiting for the next engineer turn: {len(task.queued)}")
        lines += [f"  - {first_line(m)}" for m in task.queued]
    if context.user_messages:
        lines.append(f"Your messages the engineer has read: {len(context.user_messages)}")
    ignored = [s for s in ("inspector", "tester") if getattr(pipeline, f"ignore_{s}")]
    if ignored:
        lines.append("Skipped stages: " + ", ".join(ignored))
    lines += [f"Note: {n}" for n in context.notes]
    return "\n".join(lines)


def stage_line(task: LiveTask, stage: str) -> str:
    """The stage's last verdict in one line (with up to three findings when it failed)."""
    context = task.pipeline.context
    feedback = context.inspector_feedback if stage == "inspector" else context.tester_feedback
    skipped = getattr(task.pipeline, f"ignore_{stage}")
    if not feedback:
        return "skipped" if skipped else "not run yet"
    last = feedback[-1]
    verdict = "passed" if last.passed else "failed"
    if last.passed and stage == "inspector" and task.reports.inspection is not None:
        ran = sorted({run.tool for run in task.reports.inspection.tools_run})
        verdict = f"passed ({', '.join(ran)})" if ran else "nothing checked (no linter ran)"
    if last.passed and stage == "tester" and task.reports.tests is not None:
        tests = task.reports.tests
        if tests.passed + tests.failed + tests.errors == 0:
            verdict = (
                f"nothing tested ({tests.status}{': ' + tests.detail if tests.detail else ''})"
            )
        else:
            verdict = f"passed ({tests.passed} test(s), {tests.framework})"
    text = f"{verdict} at loop {last.loop}" + (" — now skipped" if skipped else "")
    if not last.passed:
        found = [first_line(line) for line in last.text.splitlines() if line.strip()]
        text += "".join(f"\n  {line}" for line in found[:FEEDBACK_LINES])
    return text


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= LINE_MAX else line[: LINE_MAX - 1] + "…"
