"""How one node of an approved plan runs: as a request to its agent, in its session.

A node is the text an agent is asked (its prompt, its context, the outputs of the
nodes it depends on) sent through the engine's answer path, the same one ``@librarian
TEXT`` takes (:class:`backend.agents.answering.AnswerPipeline`): the Guide's bus, the
agent's turn, the answer recorded in the transcript. The answer's text is the node's
output for its dependants.

Engineer nodes run as pipelines (engineer -> inspector -> tester sharing a context,
``backend.pipelines``) through :class:`EngineerPipelines`, the engine's
:class:`backend.engine.plan_runs.pipeline_work.PipelineWork`; a runner given none (a unit test's)
runs them as one engineer turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from backend.errors import ErrorKind, SylkError
from backend.guide.routing.decision import AGENT_TARGETS, RouteDecision, Target
from backend.messages import Message, MessageType
from backend.orchestration import NodeResult
from backend.plans import PlanNode

Record = Message[dict[str, Any]]
# (session_id, decision) -> the answer as recorded (the engine's AnswerPipeline.answer)
AskAgent = Callable[[str, RouteDecision], Awaitable[Record]]

OUTPUT_MAX = 20_000  # characters of one node's output kept for its dependants
UPSTREAM_MAX = 60_000  # characters of upstream outputs put into one node's request
PASSING_STOPS = frozenset({None, "final", "truncated"})


class EngineerPipelines(Protocol):
    """What runs an engineer node as a pipeline, asking through ``ask``."""

    async def run(
        self,
        ask: AskAgent,
        session_id: str,
        plan_id: str,
        node: PlanNode,
        upstream: Mapping[str, Any],
    ) -> NodeResult: ...


class DagError(SylkError):
    """A plan's DAG cannot be run, found or stopped as asked."""

    error_kind = ErrorKind.CONFLICT


class PlanNotApprovedError(DagError):
    def __init__(self, plan_id: str, version: int, status: str) -> None:
        super().__init__(
            f"plan {plan_id!r} (version {version}) is {status}: only an approved plan runs",
            help_hint=f"/plan show {plan_id}, then /plan approve {plan_id}",
            details={"reason": "plan_not_approved", "plan_id": plan_id, "status": status},
        )


class DagNotRunningError(DagError):
    def __init__(self, plan_id: str) -> None:
        super().__init__(
            f"plan {plan_id!r} has no DAG running",
            help_hint="orchestrator.dag.status shows the session's DAGs",
            details={"reason": "dag_not_running", "plan_id": plan_id},
        )


class DagBusyError(DagError):
    def __init__(self, running: str, wanted: str) -> None:
        super().__init__(
            f"plan {running!r} is running in this session: plan {wanted!r} waits for it",
            help_hint=f"orchestrator.dag.cancel {{plan_id: {running!r}}} stops it first",
            details={"reason": "dag_busy", "running": running, "plan_id": wanted},
        )


class DagNotFoundError(DagError):
    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, what: str) -> None:
        super().__init__(
            f"no DAG of this session has {what}",
            help_hint="orchestrator.dag.status lists the session's DAGs",
            details={"reason": "dag_not_found", "what": what},
        )


def node_request(plan_id: str, node: PlanNode, upstream: Mapping[str, Any]) -> str:
    """What the node's agent is asked: the task, its context, what came before it."""
    lines = [f"Task {node.id} of plan {plan_id}: {node.prompt}"]
    context = node.context
    if context.reason:
        lines.append(f"Why: {context.reason}")
    if context.relevant_files:
        lines.append("Relevant files: " + ", ".join(context.relevant_files))
    lines += [f"Constraint: {c}" for c in context.constraints]
    lines += [f"Must satisfy: {c}" for c in context.compliance_criteria]
    wanted = list(context.upstream_outputs) or list(upstream)
    budget = UPSTREAM_MAX
    shown = []
    for dep in wanted:
        output = upstream.get(dep)
        if output is None or budget <= 0:
            continue
        text = str(output)[:budget]
        budget -= len(text)
        shown.append(f"--- result of task {dep} ---\n{text}")
    if shown:
        lines.append("Results of the tasks this one builds on:")
        lines += shown
    return "\n".join(lines)


def result_of(record: Record) -> NodeResult:
    """The node's result from the answer the agent path recorded.

    A notice instead of an answer is a failure (the turn errored, was cancelled, the
    bus refused it); with no model configured it is not retried (nothing would
    change). An answer whose turn did not end normally is a failed attempt too.
    """
    payload = record.payload
    text = str(payload.get("text") or "")
    if record.type is MessageType.SYSTEM_NOTICE:
        retryable = not payload.get("offline")
        return NodeResult.failed(text or "the agent did not answer", retryable=retryable)
    stop = payload.get("stop")
    if stop not in PASSING_STOPS:
        why = payload.get("error") or f"the turn stopped ({stop})"
        return NodeResult.failed(str(why))
    return NodeResult.passed(text[:OUTPUT_MAX])


class NodeRunner:
    """``run(node, upstream)`` for one DAG: the scheduler's ``run_node``."""

    def __init__(
        self,
        ask: AskAgent,
        session_id: str,
        plan_id: str,
        cancel_turns: Callable[[str], object],
        pipelines: EngineerPipelines | None = None,
    ) -> None:
        self._ask = ask
        self._session_id = session_id
        self._plan_id = plan_id
        self._cancel_turns = cancel_turns
        self._pipelines = pipelines

    async def run(self, node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        try:
            if node.agent == Target.ENGINEER.value:
                return await self.engineer(node, upstream)
            return await self.agent_request(node, upstream)
        except asyncio.CancelledError:
            # Timed out or cancelled: the agent's turn runs in its consumer, not here, so
            # it is stopped too (the session's turns: a DAG's nodes are its turns).
            self._cancel_turns(self._session_id)
            raise

    async def agent_request(self, node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        """A non-engineer node: a request to its agent through the answer path."""
        try:
            target = Target(node.agent)
        except ValueError:
            target = None
        if target is None or target not in AGENT_TARGETS:
            return NodeResult.failed(f"no agent {node.agent!r} takes requests", retryable=False)
        text = node_request(self._plan_id, node, upstream)
        decision = RouteDecision(target=target, confidence=1.0, tier="dsl", text=text)
        return result_of(await self._ask(self._session_id, decision))

    async def engineer(self, node: PlanNode, upstream: Mapping[str, Any]) -> NodeResult:
        """An engineer node: a pipeline (engineer -> inspector -> tester with feedback
        loops), or one engineer turn when this runner was given no pipelines."""
        if self._pipelines is None:
            return await self.agent_request(node, upstream)
        return await self._pipelines.run(self._ask, self._session_id, self._plan_id, node, upstream)
