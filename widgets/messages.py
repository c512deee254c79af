"""App-wide Textual messages: engine events and worker results, as the UI sees them.

The app turns every engine event into one of these and posts it to itself;
handlers then hand the new state down to the widgets. Messages that belong to
one widget (a row picked in the session list) are nested in that widget.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from textual.message import Message

from backend.events import (
    ActiveSessionChanged,
    AgentStepEvent,
    EngineEvent,
    EngineNotice,
    IndexProgress,
    MessageAppended,
    QuestionAsked,
    SessionChanged,
    SessionCreated,
)
from backend.messages import Message as EngineMessage
from backend.questions import ChoiceQuestion
from backend.sessions.models import Session, SessionState

Transcript = list[EngineMessage[dict[str, Any]]]


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


@dataclass
class AgentStepped(Message):
    """A step of an agent's turn: a model call, streamed text, a tool call, the end."""

    session_id: str
    role: str
    kind: str
    text: str = ""


@dataclass
class TranscriptLoaded(Message):
    """The tail of a session's transcript was read from the archive (``None``: failed)."""

    session_id: str
    messages: Transcript | None


@dataclass
class SessionsLoaded(Message):
    """The engine is ready: every visible session, and the one in front."""

    sessions: list[Session]
    foreground_id: str | None


@dataclass
class SubmitSettled(Message):
    """A line sent from the composer was recorded (``accepted``) or refused."""

    session_id: str
    text: str
    accepted: bool


@dataclass
class ChoiceRequested(Message):
    """The engine asks the user to pick an option; the answer resolves ``answer``."""

    question: ChoiceQuestion
    answer: asyncio.Future[str | None]


@dataclass
class IndexChanged(Message):
    """The code index of a workspace made progress, finished, or followed an edit."""

    workspace: str
    text: str  # what the status line shows, e.g. "indexing 340/2,275 files"


def index_text(event: IndexProgress) -> str:
    if event.phase in ("building", "rebuilding"):
        verb = "indexing" if event.phase == "building" else "re-indexing"
        return f"{verb} {event.done:,}/{event.total:,} files" if event.total else f"{verb}…"
    if event.phase == "failed":
        return f"index failed: {event.error}"
    if event.phase == "ready":
        return f"{event.total:,} files indexed"
    return f"index updated ({event.changed} changed)"


def engine_event_message(event: EngineEvent, *, follow: bool = True) -> Message | None:
    """The app-wide message for an engine event (``None``: the UI ignores it)."""
    if isinstance(event, MessageAppended):
        return TranscriptAppended(event.message)
    if isinstance(event, SessionCreated):
        return SessionAdded(event.session)
    if isinstance(event, SessionChanged):
        return SessionUpdated(event.session, event.operation, event.old_state)
    if isinstance(event, ActiveSessionChanged):
        return ForegroundChanged(event.session_id, event.previous_id, follow=follow)
    if isinstance(event, EngineNotice):
        return EngineNoticePosted(event.level, event.text)
    if isinstance(event, QuestionAsked):
        return ChoiceRequested(event.question, event.answer)
    if isinstance(event, IndexProgress):
        return IndexChanged(event.workspace, index_text(event))
    if isinstance(event, AgentStepEvent):
        step = event.step
        text = step.data.get("text") if step.kind == "text_delta" else None
        return AgentStepped(
            step.session_id, step.role, step.kind, text if isinstance(text, str) else ""
        )
    return None
