"""UiState: what the UI knows, kept apart from any widget, published through signals.

The app applies engine events and worker results to the store; the store changes
its state and publishes what changed (a ``textual.signal.Signal`` each). Screens
read the state and subscribe to the signals for what they show. Nothing here
talks to the engine or touches a widget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from textual.dom import DOMNode
from textual.signal import Signal

from backend.message_types import MessageType
from screens.state.answer_drafts import AnswerDrafts
from screens.state.pending import PendingQuestions
from screens.state.plan_view import PlanBoard
from screens.state.status_board import StatusBoard
from screens.state.transcript_cache import TranscriptCache

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.messages import Message
    from backend.sessions.models import Session

    EngineMessage = Message[dict[str, Any]]

TRANSCRIPT_LIMIT = 200
"""Messages of a session's transcript read and shown when it comes on screen."""
CACHED_SESSIONS = 24
"""Recently shown transcripts kept in memory, so switching back needs no read."""
EMPTY_TRANSCRIPT = "No messages yet. Type below; /help lists the commands."
OLDER_HEADER = "↑ older messages load as you scroll up"


@dataclass(frozen=True)
class Shown:
    """The transcript on screen changes to ``session_id``'s (or to a placeholder for it)."""

    session_id: str
    messages: list[EngineMessage]
    placeholder: str
    header: str = ""
    ready: bool = True
    """False while the transcript is read, or when it could not be: no draft to show."""
    more: bool = False
    """The archive holds older messages than these: scrolling to the top reads them."""


@dataclass(frozen=True)
class OlderShown:
    """Older messages of the transcript on screen, to add above what it shows."""

    session_id: str
    messages: list[EngineMessage]
    more: bool
    header: str


@dataclass(frozen=True)
class DraftChanged:
    """The answer being written in ``session_id`` changed."""

    session_id: str
    at_once: bool
    """A turn started or ended, or a recorded answer replaced the draft: show it now
    (a streamed piece may wait for the next repaint)."""


@dataclass(frozen=True)
class LineSettled:
    """The line sent from the composer was recorded (``accepted``) or refused."""

    session_id: str
    text: str
    accepted: bool


class UiState:
    """The sessions, the one in front, the one on screen, drafts and index status."""

    def __init__(
        self,
        owner: DOMNode,
        *,
        clock: Callable[[], datetime],
        transcript_limit: int = TRANSCRIPT_LIMIT,
        cached_sessions: int = CACHED_SESSIONS,
    ) -> None:
        self.sessions: dict[str, Session] = {}
        """Every visible session, in list order (the engine's numbering)."""
        self.foreground_id: str | None = None
        """The session in front (the engine's active session)."""
        self.viewed_id: str | None = None
        """The session the user asked to see (on screen once its transcript is read)."""
        self.shown_id: str | None = None
        """The session whose transcript (or a placeholder for it) is on screen."""
        self.drafts = AnswerDrafts(clock)
        self.index_status: dict[str, str] = {}
        """What each workspace's code index is doing, by workspace path."""
        self.pending_line: tuple[str, str] | None = None
        """The line sent from the composer and not yet recorded (session, text)."""
        self.transcript_limit = transcript_limit
        self._cache = TranscriptCache(sessions=cached_sessions, messages=transcript_limit)

        self.sessions_signal: Signal[Session | None] = Signal(owner, "sessions")
        """A session was added, changed or closed; ``None``: the whole list is new."""
        self.foreground_signal: Signal[str | None] = Signal(owner, "foreground")
        self.shown_signal: Signal[Shown] = Signal(owner, "shown")
        self.appended_signal: Signal[EngineMessage] = Signal(owner, "appended")
        """A message was committed to a session's transcript (any session)."""
        self.prepared_signal: Signal[list[EngineMessage]] = Signal(owner, "prepared")
        """A transcript was read ahead of time, not to show yet: lay it out now."""
        self.draft_signal: Signal[DraftChanged] = Signal(owner, "draft")
        self.index_signal: Signal[str] = Signal(owner, "index")
        """A workspace's index status changed (the workspace's path)."""
        self.line_signal: Signal[LineSettled] = Signal(owner, "line")
        self.older_signal: Signal[OlderShown] = Signal(owner, "older")
        self.pending = PendingQuestions(owner)
        """What waits on the user in every session; ``pending.signal`` when that changes."""
        self.plans = PlanBoard(owner, clock=clock)
        """Each session's plan and pipelines, for the DAG view; ``plans.changed_signal``."""
        self.status = StatusBoard(owner)
        """The status bar's facts for the session on screen; ``status.signal``."""

    # -- queries ----------------------------------------------------------------------
    def number(self, session_id: str | None) -> int | None:
        """The session's number in the list, from 1 (``None``: not listed)."""
        if session_id not in self.sessions:
            return None
        return list(self.sessions).index(session_id) + 1

    def session_at(self, number: int) -> str | None:
        ids = list(self.sessions)
        return ids[number - 1] if 1 <= number <= len(ids) else None

    def step_from_viewed(self, delta: int) -> str | None:
        """The session ``delta`` rows from the one viewed, wrapping around."""
        ids = list(self.sessions)
        if not ids:
            return None
        here = ids.index(self.viewed_id) if self.viewed_id in self.sessions else -delta
        return ids[(here + delta) % len(ids)]

    def index_text(self, session: Session | None) -> str | None:
        return self.index_status.get(session.workspace) if session is not None else None

    def read_ahead(self, session_id: str) -> list[str]:
        """The sessions next/previous would show whose transcripts are not in memory."""
        ids = list(self.sessions)
        if session_id not in self.sessions or len(ids) < 2:
            return []
        here = ids.index(session_id)
        neighbours = dict.fromkeys(ids[(here + step) % len(ids)] for step in (1, -1))
        return [n for n in neighbours if n not in self._cache]

    # -- sessions ---------------------------------------------------------------------
    def load(self, sessions: Iterable[Session], foreground_id: str | None) -> str | None:
        """The engine is ready; returns the session to put on screen, if it changes."""
        self.sessions = {s.id: s for s in sessions if s.closed_at is None}
        self.sessions_signal.publish(None)
        self.set_foreground(foreground_id)
        target = foreground_id or next(iter(self.sessions), None)
        return target if target != self.viewed_id else None

    def upsert(self, session: Session) -> None:
        if session.closed_at is None:
            self.sessions[session.id] = session
        else:
            self.sessions.pop(session.id, None)
        self.sessions_signal.publish(session)

    def set_foreground(self, session_id: str | None) -> None:
        self.foreground_id = session_id
        self.foreground_signal.publish(session_id)

    def set_index(self, workspace: str, text: str) -> None:
        self.index_status[workspace] = text
        self.index_signal.publish(workspace)

    # -- transcripts and drafts ---------------------------------------------------------
    def append(self, message: EngineMessage) -> None:
        self._cache.append(message)
        self.appended_signal.publish(message)
        if self.drafts.answered(message):
            self.draft_signal.publish(DraftChanged(message.session_id, at_once=True))
        pending = self.pending_line
        if message.type is MessageType.USER_INPUT and pending and pending[0] == message.session_id:
            # Recorded: the line is safe in the transcript, even if an answer takes long.
            self._settle_line(accepted=True)

    def step(
        self,
        session_id: str,
        role: str,
        kind: str,
        text: str,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        was_working = self.drafts.working(session_id)
        self.drafts.step(session_id, role, kind, text, data)
        turn_edge = was_working != self.drafts.working(session_id)
        # A tool call starting or ending shows at once; streamed text and output may wait.
        at_once = turn_edge or kind in ("tool_call", "tool_result")
        self.draft_signal.publish(DraftChanged(session_id, at_once=at_once))

    def view(self, session_id: str) -> bool:
        """Ask to see ``session_id``; True when it is on screen at once, from memory."""
        self.viewed_id = session_id
        cached = self._cache.get(session_id)
        if cached is None:
            return False
        self._show(session_id, cached)
        return True

    def begin_read(self, session_id: str) -> bool:
        """True when ``session_id``'s transcript must be read (no read of it is running)."""
        if self._cache.loading(session_id):
            return False
        self._cache.begin(session_id)
        return True

    def show_loading(self, session_id: str) -> None:
        """The read takes long: say so, unless the user moved on or it arrived."""
        if self.viewed_id == session_id and self.shown_id != session_id:
            self._placeholder(session_id, "Loading…")

    def loaded(self, session_id: str, messages: list[EngineMessage] | None) -> bool:
        """A read ended (``None``: it failed); True when it put the session on screen."""
        tail = self._cache.complete(session_id, messages)
        if tail is None:  # the error itself is shown as a notification
            if session_id == self.viewed_id:
                self._placeholder(session_id, "Not readable.")
            return False
        if session_id == self.viewed_id:
            self._show(session_id, tail)
            return True
        self.prepared_signal.publish(list(tail))
        return False

    def _show(self, session_id: str, messages: list[EngineMessage]) -> None:
        more = len(messages) >= self.transcript_limit
        header = OLDER_HEADER if more else ""
        self.shown_id = session_id
        shown = Shown(session_id, list(messages), EMPTY_TRANSCRIPT, header, more=more)
        self.shown_signal.publish(shown)

    def older_loaded(self, session_id: str, messages: list[EngineMessage], more: bool) -> None:
        """Older messages were read; shown above the rest if the session is still on screen."""
        if session_id == self.shown_id:
            header = OLDER_HEADER if more else ""
            self.older_signal.publish(OlderShown(session_id, messages, more, header))

    def _placeholder(self, session_id: str, text: str) -> None:
        self.shown_id = session_id
        self.shown_signal.publish(Shown(session_id, [], text, ready=False))

    # -- the composer's line ------------------------------------------------------------
    def begin_line(self, session_id: str, text: str) -> bool:
        """The composer sends a line; False while an earlier one is not settled."""
        if not text.strip() or self.pending_line is not None:
            return False
        self.pending_line = (session_id, text)
        return True

    def settle_line(self, session_id: str, text: str, *, accepted: bool) -> None:
        if self.pending_line == (session_id, text):
            self._settle_line(accepted=accepted)

    def _settle_line(self, *, accepted: bool) -> None:
        """The pending line was recorded (clear it) or refused (keep it to edit)."""
        if self.pending_line is None:
            return
        session_id, text = self.pending_line
        self.pending_line = None
        self.line_signal.publish(LineSettled(session_id, text, accepted))
