"""An engineer node of an approved plan, run as a pipeline: engineer -> inspector -> tester.

:class:`PipelineWork` gives :class:`backend.pipelines.Pipeline` the engine's parts: the
engineer is one engineer turn through the same answer path every node takes (the node's
request, plus the pipeline's latest feedback on later loops); the files it changed are
the paths of the edits that turn recorded (``payload["actions"]``, the same record every
front end shows); the checks are the project's own tools as discovery found them, run in
the session's sandbox (:class:`SandboxedChecks`); at the loop limit the user is asked on
the QuestionBoard whether to ignore the failing stage or fail the task, and when nobody
can answer the task fails. Every pipeline transition is published as an
:class:`~backend.events.EngineNotice` naming the plan and the task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from backend.agents.answering import pipeline_turn
from backend.agents.tool_actions import EDIT_OPS, ToolAction, actions_from_payload
from backend.checkpoints.task_ledger import TaskLedger, task_key, task_tag
from backend.engine.plan_runs.dag_nodes import OUTPUT_MAX, AskAgent, Record, node_request, result_of
from backend.engine.plan_runs.pipeline_handoffs import HANDED_OFF, PipelineHandoffs
from backend.errors import ErrorKind, SylkError
from backend.events import ChoiceOption, ChoiceQuestion, EngineNotice, EventStream
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest
from backend.orchestration import NodeResult
from backend.pipelines.bus import InMemoryPipelineBus
from backend.pipelines.context import (
    INTERRUPTED,
    EngineerResult,
    PipelineContext,
    PipelineEvent,
    PipelineResult,
    PipelineState,
)
from backend.pipelines.pipeline import Pipeline
from backend.pipelines.pipeline_checks import PipelineChecker, SandboxedChecks
from backend.plans import PlanNode
from backend.questions import QuestionBoard
from backend.sandbox import Confines
from backend.team.engineer_requests import EngineerRequests, task_execute
from backend.team.model_checks import ModelCheckParts, PipelineSeat
from backend.team.pipeline_desk import (
    CheckReports,
    LiveTask,
    PipelineDesk,
    ReportedChecks,
    task_interact,
)
from backend.team.task_view import pipeline_moved
from backend.team.wiring import install_handler

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

NOTICE_DETAIL_MAX = 300  # characters of a transition's detail in its notice
DECISIONS = ("ignore", "fail")


class EngineerTurnFailedError(SylkError):
    """The engineer's turn did not answer (ends the pipeline; the node's result says why)."""

    error_kind = ErrorKind.CONFLICT


class EditsNotApprovedError(SylkError):
    """The approval policy refused the engineer's edits: the task cannot be done as it
    stands, and checking "0 file(s)" would pass it with nothing done. Another attempt
    meets the same policy, so it is not retried."""

    error_kind = ErrorKind.DENIED


def refused_edits(record: Record) -> list[ToolAction]:
    """The turn's edits and writes the approval *policy* refused (read-only mode, a deny
    rule, an ask nobody could answer); a refusal the user gave is left out: the model
    read the user's reason and may do the task another way."""
    made = [i for a in actions_from_payload(record.payload) for i in [a, *(a.refused or [])]]
    return [
        a for a in made  # a batch's refused edits count as those made alone
        if a.status == "denied" and a.op in EDIT_OPS
        and not (a.approval or "").startswith("denied by you")
    ]  # fmt: skip


def refusal_reason(refused: list[ToolAction]) -> str:
    """Why the task failed and what lets it through, in the user's terms."""
    paths = ", ".join(dict.fromkeys(a.title for a in refused if a.title)) or "the workspace"
    said = refused[0].approval or ""
    if said.startswith("denied by rule"):
        why = said.removeprefix("denied by ")
        how = "remove or narrow that rule under [approvals] deny in the config"
    elif said.startswith("denied by mode"):
        why = "approval mode " + said.removeprefix("denied by mode ")
        how = "allow them with /approval auto-edit (sylk run --approval auto-edit)"
    else:
        why = "approval mode ask, no one to answer"
        how = ("allow them with /approval auto-edit (sylk run --approval auto-edit or --yes), "
               "or answer the approval")  # fmt: skip
    return f"the engineer's edits to {paths} were not approved ({why}): {how}"


def edited_files(record: Record, workspace: Path) -> list[str]:
    """Workspace-relative paths the turn's successful edits and writes changed, in order,
    those made inside a ``batch`` included (``ToolAction.files``; an older record without
    them: the edit's path argument).

    A path outside the workspace (absolute elsewhere, or climbing out with ``..``) is
    left out: the checks run on the workspace's files only.
    """
    found: list[str] = []
    for action in actions_from_payload(record.payload):
        if action.status != "ok":
            continue
        named = action.files
        if named is None:
            named = [action.title] if action.op in EDIT_OPS and action.title else []
        for raw in named:
            path = Path(raw)
            if path.is_absolute():
                try:
                    path = path.relative_to(workspace)
                except ValueError:
                    continue
            parts = PurePosixPath(path.as_posix()).parts
            if not parts or ".." in parts:
                continue
            name = PurePosixPath(*parts).as_posix()
            if name not in found:
                found.append(name)
    return found


def with_feedback(request: str, context: PipelineContext) -> str:
    """The node's request, and on later loops what the inspector or tester said."""
    extra = []
    if context.last_feedback:
        extra.append(f"Feedback on your previous attempt (loop {context.loop - 1}):")
        extra.append(context.last_feedback)
    if context.user_messages:
        extra.append("Messages from the user:")
        extra += [f"- {m}" for m in context.user_messages]
    return "\n\n".join([request, "\n".join(extra)]) if extra else request


class ChecksUnavailableError(SylkError):
    """The project's checks could not be found (tool discovery failed)."""

    error_kind = ErrorKind.CONFLICT


@dataclass
class PipelineRun:
    """How one pipeline ended, with what the node or the quick answer needs of it."""

    task: LiveTask
    result: PipelineResult
    turn_failure: NodeResult | None  # the engineer's turn did not answer: why
    asked: bool  # the user was asked at the loop limit (another attempt changes nothing)
    refused: bool = False  # the approval policy refused its edits (a retry meets it again)


class PipelineWork:
    """Runs engineer nodes as pipelines (``NodeRunner``'s ``pipelines``), and single
    requests as one-node pipelines (``@engineer TEXT``); every pipeline is on ``desk``
    while it runs (``/task``)."""

    def __init__(
        self,
        *,
        events: EventStream,
        questions: QuestionBoard,
        tools: ToolDiscovery,
        confinement: Callable[[Path], Confines],
        workspace_of: Callable[[str], Path],
        desk: PipelineDesk | None = None,
    ) -> None:
        self._events = events
        self._questions = questions
        self._tools = tools
        self._confinement = confinement
        self._workspace_of = workspace_of
        self.desk = desk if desk is not None else PipelineDesk(publish=events.publish)
        # Where a plan task's edits are written down as they land, so a resume after a
        # kill puts them back first (backend.engine.plan_runs.task_rollback); None: not kept.
        self.ledger: TaskLedger | None = None
        # The model's checks around the tools (compliance, tests written); None: tools only.
        self.model_checks: ModelCheckParts | None = None
        # The engineer's handoff to a new pipeline at 95% of its context; None: never.
        self.handoffs: PipelineHandoffs | None = None

    async def run(
        self,
        ask: AskAgent,
        session_id: str,
        plan_id: str,
        node: PlanNode,
        upstream: Mapping[str, Any],
    ) -> NodeResult:
        context = PipelineContext(
            task_id=node.id,
            task_prompt=node.prompt,
            constraints=list(node.context.constraints),
            compliance_criteria=list(node.context.compliance_criteria),
            upstream_outputs=dict(upstream),
        )
        request = node_request(plan_id, node, upstream)
        tag = task_key(plan_id, node.id)
        if self.ledger is not None:  # this attempt's edits from here on
            await self.ledger.begin(session_id, tag)
        try:
            ran = await self.run_pipeline(
                ask, session_id, context, request, plan_id=plan_id, tag=tag
            )
        except ChecksUnavailableError as error:
            return NodeResult.failed(error.message)
        outcome = ran.result
        if outcome.success:
            said = outcome.context.engineer_texts[-1] if outcome.context.engineer_texts else ""
            return NodeResult.passed(said[:OUTPUT_MAX])
        if outcome.reason == INTERRUPTED:  # the user stopped it (/task ID interrupt)
            return NodeResult.failed(INTERRUPTED, retryable=False)
        if ran.turn_failure is not None:
            return ran.turn_failure
        if ran.refused:
            return NodeResult.failed(outcome.reason, retryable=False)
        # At the loop limit the user (or nobody) said "fail": another attempt changes nothing.
        return NodeResult.failed(outcome.reason or "the pipeline failed", retryable=not ran.asked)

    async def run_request(
        self, ask: AskAgent, session_id: str, text: str, task_id: str | None = None
    ) -> LiveTask:
        """A single request to the engineer as a one-node pipeline (task q1, q2, ...)."""
        task_id = task_id or self.desk.next_quick_id(session_id)
        context = PipelineContext(task_id=task_id, task_prompt=text)
        return (await self.run_pipeline(ask, session_id, context, text)).task

    async def run_pipeline(
        self,
        ask: AskAgent,
        session_id: str,
        context: PipelineContext,
        request: str,
        *,
        plan_id: str | None = None,
        tag: str | None = None,
    ) -> PipelineRun:
        """Run ``context``'s task to its end, on the desk while it runs; ``tag``: the
        plan task its engineer turns' edits are recorded under (``TaskLedger``)."""
        workspace = self._workspace_of(session_id)
        confines = self._confinement(workspace)
        wanted = ToolDiscoveryRequest(session_id=session_id, requesting_agent="inspector")
        try:
            found = await self._tools.adiscover(wanted, workspace, protected=confines.protected)
        except SylkError as error:
            raise ChecksUnavailableError(f"tool discovery failed: {error.message}") from error
        turn_failure: list[NodeResult] = []
        asked: list[str] = []
        refused: list[str] = []
        held: list[LiveTask] = []  # the task exists once the pipeline does

        async def engineer(context: PipelineContext) -> EngineerResult:
            text = with_feedback(self._request_for(session_id, context, request), context)
            decision = RouteDecision(target=Target.ENGINEER, confidence=1.0, tier="dsl", text=text)
            with pipeline_turn(), task_tag(tag):  # a turn of this pipeline, not a new one
                record = await ask(session_id, decision)
            held[0].last_answer = record
            result = result_of(record)
            if not result.ok:
                turn_failure.append(result)
                raise EngineerTurnFailedError(result.error or "the engineer did not answer")
            if denied := refused_edits(record):
                refused.append(refusal_reason(denied))
                raise EditsNotApprovedError(refused[-1])
            done = EngineerResult(
                text=str(result.output or ""), modified_files=edited_files(record, workspace)
            )
            return await self._hand_off_if_due(
                ask, done, session_id=session_id, plan_id=plan_id, context=context,
                record=record, request=request,
            )  # fmt: skip

        async def decide(context: PipelineContext, reason: str) -> str:
            asked.append(reason)
            question = ChoiceQuestion(
                title=f"{held[0].label}: still failing after {context.loop} loops",
                prompt=reason,
                options=[
                    ChoiceOption("ignore", "Ignore", "skip that check and go on"),
                    ChoiceOption("fail", "Fail the task", "the task ends failed", True),
                ],
            )
            answer = await self._questions.ask(question, session_id)
            return answer if answer in DECISIONS else "fail"

        def on_event(event: PipelineEvent) -> None:
            self._events.publish(self._notice(session_id, held[0], event))
            self._events.publish(pipeline_moved(held[0], event.detail[:NOTICE_DETAIL_MAX]))

        bus = InMemoryPipelineBus(f"{plan_id or 'request'}/{context.task_id}", session_id)
        reports = CheckReports()
        tools = SandboxedChecks(workspace, found, confines)
        checker: PipelineChecker = tools
        if self.model_checks is not None:
            seat = PipelineSeat(session_id, workspace, context, ask, request, tag)
            checker = self.model_checks(tools, seat)
        checks = ReportedChecks(checker, reports)
        pipeline = Pipeline(
            context, engineer=engineer, checks=checks, decide=decide, on_event=on_event, bus=bus
        )
        task = self.desk.open(session_id, pipeline, plan_id=plan_id, reports=reports)
        held.append(task)
        try:
            outcome = await pipeline.run()
        finally:
            self.desk.close(task)
        failure = turn_failure[-1] if turn_failure else None
        return await self._successor(ask, session_id, context.task_id, plan_id, tag) or PipelineRun(
            task, outcome, failure, bool(asked), bool(refused)
        )

    def _request_for(self, session_id: str, context: PipelineContext, request: str) -> str:
        """The engineer's request: after a failed handoff, the summary it goes on from."""
        handoffs = self.handoffs
        return handoffs.request_for(session_id, context.task_id, request) if handoffs else request

    async def _hand_off_if_due(
        self, ask: AskAgent, done: EngineerResult, *, session_id: str, plan_id: str | None,
        context: PipelineContext, record: Record, request: str,
    ) -> EngineerResult:  # fmt: skip
        """At 95% of the engineer's context a new pipeline goes on (raises to end this one)."""
        if self.handoffs is not None:
            await self.handoffs.after_turn(
                ask, session_id=session_id, plan_id=plan_id, context=context,
                record=record, result=done, request=request,
            )  # fmt: skip
        return done

    async def _successor(
        self, ask: AskAgent, session_id: str, task_id: str, plan_id: str | None, tag: str | None
    ) -> PipelineRun | None:
        """The new pipeline's run when the one that just ended handed off, else None."""
        if self.handoffs is None:
            return None
        if (successor := self.handoffs.take_successor(session_id, task_id, plan_id)) is None:
            return None
        return await self.run_pipeline(
            ask, session_id, successor.context, successor.request, plan_id=plan_id, tag=tag
        )

    @staticmethod
    def _notice(session_id: str, task: LiveTask, event: PipelineEvent) -> EngineNotice:
        """A failure or a wait for the user asks for the user's eye; any other move is
        progress, which the DAG view and the pipeline pane show as it happens."""
        detail = event.detail.strip().splitlines()[0] if event.detail.strip() else ""
        text = f"{task.label}: {event.state} (loop {event.loop})"
        if detail:
            text += f": {detail[:NOTICE_DETAIL_MAX]}"
        bad = event.state in (PipelineState.FAILED, PipelineState.WAITING_FOR_USER)
        bad = bad and not event.detail.startswith(HANDED_OFF)  # its task goes on
        level: Literal["info", "warning"] = "warning" if bad else "info"
        return EngineNotice(
            session_id=session_id, level=level, text=text, plan_id=task.plan_id, progress=not bad
        )


def pipeline_desk(parts: EngineParts) -> PipelineDesk:
    """The engine's live pipelines (``/task``)."""
    work = parts.dags.pipelines
    if not isinstance(work, PipelineWork):
        raise TypeError("this engine runs engineer nodes without PipelineWork")
    return work.desk


def install_pipelines(parts: EngineParts) -> None:
    """``/task``, ``guide.task.interact``, ``engineer.task.execute`` and requests for
    the Engineer as one-node pipelines, on the engine's PipelineWork."""
    work = parts.dags.pipelines
    if not isinstance(work, PipelineWork):
        return
    work.desk.cancel_turns = parts.dispatcher.cancel
    work.handoffs = PipelineHandoffs.install(parts, work.desk)
    ask = parts.answers.answer

    async def run_request(session_id: str, text: str, task_id: str | None) -> LiveTask:
        return await work.run_request(ask, session_id, text, task_id)

    requests = EngineerRequests(
        desk=work.desk, run_request=run_request, plan_running=parts.dags.running,
        sessions=parts.sessions,
    )  # fmt: skip
    parts.answers.route_engineer_requests(requests.answer)
    install_handler(parts.gateway, "guide.task.interact", task_interact(work.desk))
    install_handler(parts.gateway, "engineer.task.execute", task_execute(requests))
