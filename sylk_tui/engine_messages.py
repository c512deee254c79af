"""Engine events and worker results as the app's Textual messages.

The app turns every engine event into one of these and posts it to itself (the
engine may publish from another thread; posting a message is safe from any).
Which message an event becomes is looked up by the event's ``kind`` in
``EVENT_MESSAGES``; kinds the UI does not show map to nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel
from textual.message import Message

from backend.events import (
    ActiveSessionChanged,
    AgentStepEvent,
    DagStatusChanged,
    EngineEvent,
    EngineNotice,
    IndexProgress,
    MessageAppended,
    PipelineMoved,
    PlanApproved,
    PlanChanged,
    QuestionAsked,
    QuestionSettled,
    SessionChanged,
    SessionCreated,
    SessionPhaseChanged,
)
from backend.messages import Message as EngineMessage
from backend.questions import ChoiceQuestion
from backend.sessions.models import Session, SessionState
from screens.state.plan_view import PlanTraffic

Transcript = list[EngineMessage[dict[str, Any]]]


# -- engine events --------------------------------------------------------------------
@dataclass
class SessionAdded(Message):
    """A session was created (it may not be in front yet)."""

    session: Session


@dataclass
class SessionUpdated(Message):
    """A session's state, context or metadata changed; ``session`` is its new value."""

    session: Session
    operation: str
    old_state: SessionState | None


@dataclass
class ForegroundChanged(Message):
    """The engine's foreground session changed (``None``: no session is in front).

    ``follow`` is false when the user brought the session to the front by hand:
    the screen already shows where they are going, so it must not jump back.
    """

    session_id: str | None
    previous_id: str | None
    follow: bool = True


@dataclass
class TranscriptAppended(Message):
    """One message was committed to a session's transcript."""

    message: EngineMessage[dict[str, Any]]


@dataclass
class EngineNoticePosted(Message):
    """The engine has something to tell the user outside any transcript."""

    level: Literal["info", "warning", "error"]
    text: str
    plan_id: str | None = None  # about a plan: one toast per plan (sylk_tui.plan_follow)


@dataclass
class AgentStepped(Message):
    """A step of an agent's turn: a model call, streamed text, a tool call, the end.

    ``data`` is the step's data for the steps of a tool call (``tool_call``,
    ``tool_output``, ``tool_result``), which the draft turns into a block; else empty.
    """

    session_id: str
    role: str
    kind: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChoiceRequested(Message):
    """The engine asks the user to pick an option; the answer resolves ``answer``."""

    question_id: str
    question: ChoiceQuestion
    answer: asyncio.Future[str | None]
    session_id: str | None = None
    """The session that asks (``None``: none in particular)."""
    asked_at: datetime | None = None


@dataclass
class QuestionClosed(Message):
    """A question was answered (here or elsewhere), declined or withdrawn."""

    question_id: str
    withdrawn: bool


@dataclass
class IndexChanged(Message):
    """The code index of a workspace made progress, finished, or followed an edit."""

    workspace: str
    text: str  # what the status line shows, e.g. "indexing 340/2,275 files"


@dataclass
class DagMoved(PlanTraffic):
    """An approved plan's DAG moved: a node's transition, or the run's start or end."""

    event: DagStatusChanged


@dataclass
class PipelineChanged(PlanTraffic):
    """A pipeline moved; ``event.view`` is all it holds so far (the pipeline pane's data)."""

    event: PipelineMoved


# -- worker results ---------------------------------------------------------------------
@dataclass
class SessionsLoaded(Message):
    """The engine is ready: every visible session, and the one in front."""

    sessions: list[Session]
    foreground_id: str | None


@dataclass
class OlderLoaded(Message):
    """Messages before those shown were read (``more``: the archive holds older still)."""

    session_id: str
    messages: Transcript
    more: bool


@dataclass
class TranscriptLoaded(Message):
    """The tail of a session's transcript was read from the archive (``None``: failed)."""

    session_id: str
    messages: Transcript | None


@dataclass
class SubmitSettled(Message):
    """A line sent from the composer was recorded (``accepted``) or refused."""

    session_id: str
    text: str
    accepted: bool


# -- the table ----------------------------------------------------------------------------
def index_text(event: IndexProgress) -> str:
    if event.phase in ("building", "rebuilding"):
        verb = "indexing" if event.phase == "building" else "re-indexing"
        return f"{verb} {event.done:,}/{event.total:,} files" if event.total else f"{verb}…"
    if event.phase == "failed":
        return f"index failed: {event.error}"
    if event.phase == "ready":
        return f"{event.total:,} files indexed"
    return f"index updated ({event.changed} changed)"


TOOL_STEPS = frozenset({"tool_call", "tool_output", "tool_result"})


def _plan_moved(event: PlanChanged) -> Message | None:
    """A plan stored or moved, as a notice; its approval has its own (PlanApproved)."""
    if event.status == "approved":
        return None
    status = event.status.replace("_", " ")
    text = f"Plan {event.plan_id} (version {event.version}): {status}"
    return EngineNoticePosted("info", text, event.plan_id)


def _agent_stepped(event: AgentStepEvent, _by_hand: bool) -> AgentStepped:
    step = event.step
    text = step.data.get("text") if step.kind in ("text_delta", "reasoning_delta") else None
    data = step.data if step.kind in TOOL_STEPS else {}
    return AgentStepped(
        step.session_id, step.role, step.kind, text if isinstance(text, str) else "", data
    )


EventT = TypeVar("EventT", bound=BaseModel)


class Rule(Generic[EventT]):
    """How one kind of engine event becomes a message; ``by_hand`` is true while
    the user's own switch runs in the engine."""

    def __init__(
        self, event: type[EventT], convert: Callable[[EventT, bool], Message | None]
    ) -> None:
        self.kind: str = event.model_fields["kind"].default
        self._convert = convert

    def __call__(self, event: EngineEvent, by_hand: bool) -> Message | None:
        return self._convert(cast(EventT, event), by_hand)


def _table(*rules: Rule[Any]) -> Mapping[str, Rule[Any]]:
    return MappingProxyType({rule.kind: rule for rule in rules})


EVENT_MESSAGES: Mapping[str, Rule[Any]] = _table(
    Rule(MessageAppended, lambda e, _: TranscriptAppended(e.message)),
    Rule(SessionCreated, lambda e, _: SessionAdded(e.session)),
    Rule(SessionChanged, lambda e, _: SessionUpdated(e.session, e.operation, e.old_state)),
    Rule(SessionPhaseChanged, lambda e, _: SessionUpdated(e.session, "phase", e.session.state)),
    Rule(
        ActiveSessionChanged,
        lambda e, by_hand: ForegroundChanged(e.session_id, e.previous_id, follow=not by_hand),
    ),
    Rule(
        EngineNotice,
        lambda e, _: None if e.progress else EngineNoticePosted(e.level, e.text, e.plan_id),
    ),
    Rule(
        QuestionAsked,
        lambda e, _: ChoiceRequested(e.question_id, e.question, e.answer, e.session_id, e.at),
    ),
    Rule(QuestionSettled, lambda e, _: QuestionClosed(e.question_id, e.withdrawn)),
    Rule(IndexProgress, lambda e, _: IndexChanged(e.workspace, index_text(e))),
    Rule(AgentStepEvent, _agent_stepped),
    Rule(PlanChanged, lambda e, _: _plan_moved(e)),
    Rule(
        PlanApproved,
        lambda e, _: EngineNoticePosted(
            "info", f"Plan {e.plan_id} (version {e.version}) approved", e.plan_id
        ),
    ),
    Rule(DagStatusChanged, lambda e, _: DagMoved(e)),
    Rule(PipelineMoved, lambda e, _: PipelineChanged(e)),
)
"""Engine event kind -> how it becomes a message; a kind not here is not shown."""


def engine_message(event: EngineEvent, *, by_hand: bool = False) -> Message | None:
    """The app-wide message for an engine event (``None``: the UI ignores it)."""
    rule = EVENT_MESSAGES.get(event.kind)
    return rule(event, by_hand) if rule is not None else None
