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
from pathlib import Path, PurePosixPath
from typing import Any

from backend.agents.tool_actions import EDIT_OPS, actions_from_payload
from backend.engine.dag_nodes import OUTPUT_MAX, AskAgent, Record, node_request, result_of
from backend.errors import ErrorKind, SylkError
from backend.events import ChoiceOption, ChoiceQuestion, EngineNotice, EventStream
from backend.guide.routing.decision import RouteDecision, Target
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.tool_discovery.models import ToolDiscoveryRequest
from backend.orchestration import NodeResult
from backend.pipelines.context import (
    EngineerResult,
    PipelineContext,
    PipelineEvent,
    PipelineState,
)
from backend.pipelines.pipeline import Pipeline
from backend.pipelines.pipeline_checks import SandboxedChecks
from backend.plans import PlanNode
from backend.questions import QuestionBoard
from backend.sandbox import Confines

NOTICE_DETAIL_MAX = 300  # characters of a transition's detail in its notice
DECISIONS = ("ignore", "fail")


class EngineerTurnFailedError(SylkError):
    """The engineer's turn did not answer (ends the pipeline; the node's result says why)."""

    error_kind = ErrorKind.CONFLICT


def edited_files(record: Record, workspace: Path) -> list[str]:
    """Workspace-relative paths the turn's successful edits and writes named, in order.

    A path outside the workspace (absolute elsewhere, or climbing out with ``..``) is
    left out: the checks run on the workspace's files only.
    """
    found: list[str] = []
    for action in actions_from_payload(record.payload):
        if action.op not in EDIT_OPS or action.status != "ok" or not action.title:
            continue
        path = Path(action.title)
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


class PipelineWork:
    """Runs engineer nodes as pipelines (``NodeRunner``'s ``pipelines``)."""

    def __init__(
        self,
        *,
        events: EventStream,
        questions: QuestionBoard,
        tools: ToolDiscovery,
        confinement: Callable[[Path], Confines],
        workspace_of: Callable[[str], Path],
    ) -> None:
        self._events = events
        self._questions = questions
        self._tools = tools
        self._confinement = confinement
        self._workspace_of = workspace_of

    async def run(
        self,
        ask: AskAgent,
        session_id: str,
        plan_id: str,
        node: PlanNode,
        upstream: Mapping[str, Any],
    ) -> NodeResult:
        workspace = self._workspace_of(session_id)
        confines = self._confinement(workspace)
        request = ToolDiscoveryRequest(session_id=session_id, requesting_agent="inspector")
        try:
            found = await self._tools.adiscover(request, workspace, protected=confines.protected)
        except SylkError as error:
            return NodeResult.failed(f"tool discovery failed: {error.message}")
        turn_failure: list[NodeResult] = []
        asked: list[str] = []
        base = node_request(plan_id, node, upstream)

        async def engineer(context: PipelineContext) -> EngineerResult:
            text = with_feedback(base, context)
            decision = RouteDecision(target=Target.ENGINEER, confidence=1.0, tier="dsl", text=text)
            record = await ask(session_id, decision)
            result = result_of(record)
            if not result.ok:
                turn_failure.append(result)
                raise EngineerTurnFailedError(result.error or "the engineer did not answer")
            return EngineerResult(
                text=str(result.output or ""), modified_files=edited_files(record, workspace)
            )

        async def decide(context: PipelineContext, reason: str) -> str:
            asked.append(reason)
            question = ChoiceQuestion(
                title=f"Plan {plan_id}, task {node.id}: still failing after {context.loop} loops",
                prompt=reason,
                options=[
                    ChoiceOption("ignore", "Ignore", "skip that check and go on"),
                    ChoiceOption("fail", "Fail the task", "the plan's DAG decides", True),
                ],
            )
            answer = await self._questions.ask(question, session_id)
            return answer if answer in DECISIONS else "fail"

        def on_event(event: PipelineEvent) -> None:
            self._events.publish(self._notice(session_id, plan_id, event))

        context = PipelineContext(
            task_id=node.id,
            task_prompt=node.prompt,
            constraints=list(node.context.constraints),
            compliance_criteria=list(node.context.compliance_criteria),
            upstream_outputs=dict(upstream),
        )
        checks = SandboxedChecks(workspace, found, confines)
        pipeline = Pipeline(
            context, engineer=engineer, checks=checks, decide=decide, on_event=on_event
        )
        outcome = await pipeline.run()
        if outcome.success:
            said = outcome.context.engineer_texts[-1] if outcome.context.engineer_texts else ""
            return NodeResult.passed(said[:OUTPUT_MAX])
        if turn_failure:
            return turn_failure[-1]
        # At the loop limit the user (or nobody) said "fail": another attempt changes nothing.
        return NodeResult.failed(outcome.reason or "the pipeline failed", retryable=not asked)

    @staticmethod
    def _notice(session_id: str, plan_id: str, event: PipelineEvent) -> EngineNotice:
        detail = event.detail.strip().splitlines()[0] if event.detail.strip() else ""
        text = f"Plan {plan_id}, task {event.task_id}: {event.state} (loop {event.loop})"
        if detail:
            text += f": {detail[:NOTICE_DETAIL_MAX]}"
        bad = event.state in (PipelineState.FAILED, PipelineState.WAITING_FOR_USER)
        return EngineNotice(session_id=session_id, level="warning" if bad else "info", text=text)
