"""Typed engine events and the stream any number of subscribers can follow.

Subscribers register a synchronous listener (called in publish order on the engine's
thread) or iterate a :class:`Subscription`, whose queue is unbounded: a slow reader
never makes the engine drop an event, it only reads them later."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from backend.archive_events import ArchiveChanged
from backend.clock import utc_now
from backend.messages import Message
from backend.sessions.models import Session, SessionState
from backend.sessions.phases import SessionPhase

StepKind = Literal[
    "model_call",
    "text_delta",
    "reasoning_delta",
    "retry",
    "usage",
    "tool_call",
    "tool_output",
    "tool_result",
    "final",
    "truncated",
    "interrupted",
    "step_limit",
    "cancelled",
    "error",
]
STREAMED_STEPS: frozenset[str] = frozenset({"text_delta", "reasoning_delta", "tool_output"})
"""Steps that are published as they happen and never stored: what they carry is kept
elsewhere (the answer's text in ``final``, a command's output in ``tool_result``, the
model's reasoning, bounded, in the answer's ``payload["reasoning"]``)."""


class AgentStep(BaseModel):
    """One step of an agent's turn: a model call, a tool call or result, the stop.

    ``tool_call`` carries ``id``, ``name``, ``arguments``; ``tool_output`` (a running
    command printed) ``id``, ``stream``, ``text``, ``dropped``; ``tool_result`` ``id``,
    ``name``, ``content`` (the gateway's envelope as JSON), ``is_error``. ``truncated``
    ends a turn whose model stopped at its output limit. ``reasoning_delta`` (``text``)
    is a piece of the model's reasoning: shown apart, never part of the answer.
    """

    turn_id: str
    session_id: str
    role: str
    step: int
    kind: StepKind
    data: dict[str, Any] = Field(default_factory=dict)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)
    at: datetime = Field(default_factory=utc_now)
    session_id: str | None = None


class SessionCreated(_Event):
    kind: Literal["session.created"] = "session.created"
    session: Session


class SessionChanged(_Event):
    """A session's state, context or metadata changed."""

    kind: Literal["session.changed"] = "session.changed"
    session: Session
    operation: str
    old_state: SessionState | None = None


class SessionPhaseChanged(_Event):
    """A session's phase moved from ``old_phase`` to ``phase``; ``session`` is its new
    value (a reader that keeps sessions from ``SessionChanged`` keeps this one too)."""

    kind: Literal["session.phase"] = "session.phase"
    session: Session
    old_phase: SessionPhase
    phase: SessionPhase
    reason: str
    approval: str | None = None


class ActiveSessionChanged(_Event):
    kind: Literal["session.active"] = "session.active"
    previous_id: str | None = None


class MessageAppended(_Event):
    kind: Literal["message.appended"] = "message.appended"
    message: Message[dict[str, Any]]


class EngineNotice(_Event):
    """Something the user should see that is not part of a transcript."""

    kind: Literal["engine.notice"] = "engine.notice"
    level: Literal["info", "warning", "error"] = "info"
    text: str
    plan_id: str | None = None
    """The plan it is about, if any (a front end may keep one such notice per plan)."""
    progress: bool = False
    """A step of work under way that the plan's own views show too (a pipeline moving on);
    a front end with those views may leave it out rather than flood the user."""


class AgentStepEvent(_Event):
    """A step of an agent turn: a model call, streamed text, a tool call, the end."""

    kind: Literal["agent.step"] = "agent.step"
    step: AgentStep


@dataclass(frozen=True)
class ChoiceOption:
    value: str
    label: str
    detail: str = ""
    recommended: bool = False


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approval question shows (see :mod:`backend.approvals`): the op, who asks,
    the command and where it runs, or the file and the diff, and how it would be confined.

    ``session_rules`` are what "allow for this session" may keep: the exact command and,
    for a simple command, its prefix pattern (``pytest *``); for an edit, the file.
    """

    op: str
    agent: str
    action: str  # "edit" | "command" | "external"
    mode: str
    sandbox: str  # how the action is confined, in words ("none: ..." when it is not)
    command: str = ""
    cwd: str = ""
    path: str = ""
    diff: str = ""
    session_rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanReview:
    """What a plan review shows (see :mod:`backend.plans.review`): the plan's id and
    version, the plan as text (layers, nodes with agent and prompt, policy) and, after
    the user asked why, the Architect's answer. Answers: ``approve``, ``modify:TEXT``,
    ``why:TEXT``; ``None`` decides later."""

    plan_id: str
    version: int
    text: str
    explanation: str = ""


@dataclass(frozen=True)
class ChoiceQuestion:
    title: str
    prompt: str
    options: list[ChoiceOption] = field(default_factory=list)
    approval: ApprovalRequest | None = None  # set when the question is an approval
    plan: PlanReview | None = None  # set when the question is a plan review
    # The user may type any answer (the options, if any, are suggestions): a clarification.
    free_text: bool = False


class QuestionAsked(_Event):
    """The engine waits for the user's answer to ``question``; ``answer`` resolves it.

    See :mod:`backend.questions` for who asks and how a front end answers.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    kind: Literal["question.asked"] = "question.asked"
    question_id: str
    question: ChoiceQuestion
    # Not serialised: exports and logs carry the question, not the waiting future.
    answer: asyncio.Future[str | None] = Field(exclude=True, repr=False)


class QuestionSettled(_Event):
    """A pending question was answered (``value``), declined (None) or withdrawn."""

    kind: Literal["question.settled"] = "question.settled"
    question_id: str
    value: str | None = None
    withdrawn: bool = False


class PlanChanged(_Event):
    """A plan was stored or its status moved (draft, awaiting_approval, approved,
    rejected, superseded); ``supersedes`` is the version a modification replaced."""

    kind: Literal["plan.changed"] = "plan.changed"
    plan_id: str
    version: int
    status: str
    old_status: str | None = None
    supersedes: int | None = None


class PlanApproved(_Event):
    """The user approved a plan: the Orchestrator's cue to run ``document``."""

    kind: Literal["plan.approved"] = "plan.approved"
    plan_id: str
    version: int
    document: dict[str, Any]
    by: str


class DagStatusChanged(_Event):
    """An approved plan's DAG moved: one node's transition (``node_id`` set: pending,
    running, retrying, passed, failed, skipped, cancelled), or the whole run's start and
    end (``node_id`` None: running, passed, failed, cancelled). The seed's DAG_STATUS."""

    kind: Literal["dag.status"] = "dag.status"
    plan_id: str
    version: int
    dag_id: str
    status: str
    node_id: str | None = None
    agent: str | None = None
    attempt: int = 0
    max_attempts: int = 1
    duration_s: float | None = None
    error: str | None = None
    delay_s: float | None = None
    resumed: bool = False


class PipelineMoved(_Event):
    """A pipeline (a plan's engineer node, or an ``@engineer`` request) moved: its state,
    loop and what it holds, so a front end follows it live without reading anything
    back (the ``EngineNotice`` beside it says the same in words)."""

    kind: Literal["pipeline.state"] = "pipeline.state"
    task_id: str
    plan_id: str | None = None
    state: str
    loop: int = 0
    max_loops: int = 3
    detail: str = ""
    view: dict[str, Any] = Field(default_factory=dict)
    """The pipeline as data (``backend.team.task_view``): its loop, the engineer's
    turns, the inspector's issues and the tester's failures so far."""


class HandoffCompleted(_Event):
    """The seed's HANDOFF_COMPLETE: an engineer pipeline handed its task to a new one
    (the old closed, the new started with the bundled state; the record in the
    chronicle's ``pipeline_handoff`` category is ``entry_id``)."""

    kind: Literal["pipeline.handoff_complete"] = "pipeline.handoff_complete"
    task_id: str
    plan_id: str | None = None
    old_pipeline_id: str
    new_pipeline_id: str
    handoff_index: int
    entry_id: str = ""
    review: str = ""  # "model" or "pass-through": who reviewed the state


class IndexProgress(_Event):
    """The code index of a workspace: building (done/total files), ready, updated."""

    kind: Literal["knowledge.index"] = "knowledge.index"
    workspace: str
    phase: str
    done: int = 0
    total: int = 0
    changed: int = 0
    seconds: float = 0.0
    error: str | None = None


class FileConflict(_Event):
    """Another live session changed a file ``session_id`` changed (sent to each of the two)."""

    kind: Literal["resources.conflict"] = "resources.conflict"
    path: str  # relative to the repository's root
    other_session_id: str
    lines: tuple[int, int] | None = None  # the overlapping lines; None: the same file only
    text: str


EngineEvent = Annotated[
    SessionCreated
    | SessionChanged
    | SessionPhaseChanged
    | ActiveSessionChanged
    | MessageAppended
    | EngineNotice
    | AgentStepEvent
    | IndexProgress
    | QuestionAsked
    | QuestionSettled
    | PlanChanged
    | PlanApproved
    | DagStatusChanged
    | PipelineMoved
    | FileConflict
    | HandoffCompleted
    | ArchiveChanged,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[EngineEvent] = TypeAdapter(EngineEvent, config={"defer_build": True})

Listener = Callable[[EngineEvent], None]


class Subscription:
    """An async iterator over events published after it was opened."""

    def __init__(self, stream: EventStream) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[EngineEvent | None] = asyncio.Queue()
        self.closed = False

    def _put(self, event: EngineEvent | None) -> None:
        self._queue.put_nowait(event)

    def pending(self) -> int:
        return self._queue.qsize()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._stream._drop(self)
            self._put(None)

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        return self

    async def __anext__(self) -> EngineEvent:
        event = await self._queue.get()
        if event is None:
            raise StopAsyncIteration
        return event

    async def get(self) -> EngineEvent:
        event = await self._queue.get()
        if event is None:
            raise StopAsyncIteration
        return event


class EventStream:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._subscriptions: list[Subscription] = []

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subscriptions.append(sub)
        return sub

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Register ``listener``; returns a function that removes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _drop(self, sub: Subscription) -> None:
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._listeners) + len(self._subscriptions)

    def publish(self, event: EngineEvent) -> None:
        for listener in list(self._listeners):
            listener(event)
        for sub in list(self._subscriptions):
            sub._put(event)

    def close(self) -> None:
        for sub in list(self._subscriptions):
            sub.close()
        self._listeners.clear()


def event_to_json(event: EngineEvent) -> str:
    return EVENT_ADAPTER.dump_json(event).decode()
