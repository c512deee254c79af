"""Engine events and worker results as the app's Textual messages.

The app turns every engine event into one of these and posts it to itself (the
engine may publish from another thread; posting a message is safe from any).
Which message an event becomes is looked up by the event's ``kind`` in
``EVENT_MESSAGES``; kinds the UI does not show map to nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from textual.message import Message

from screens.state.plan_view import PlanTraffic

if TYPE_CHECKING:  # the engine's types load with the engine, after the first frame
    from backend.events import DagStatusChanged, EngineEvent, PipelineMoved
    from backend.messages import Message as EngineMessage
    from backend.questions import ChoiceQuestion
    from backend.sessions.models import Session, SessionState

Transcript = list["EngineMessage[dict[str, Any]]"]


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


# -- engine events to messages -------------------------------------------------------
def engine_message(event: EngineEvent, *, by_hand: bool = False) -> Message | None:
    """The app-wide message for an engine event (``None``: the UI ignores it).

    The table (``event_table``) imports the engine's event models, so it loads with
    the first event, once the engine is built, never before the first frame.
    """
    from sylk_tui.engine_link.event_table import message_for

    return message_for(event, by_hand=by_hand)
