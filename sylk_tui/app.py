"""SylkApp: the Textual shell around one Engine.

The app is the only part of the UI that talks to the engine. Engine events
become app-wide Textual messages (``widgets.messages``); handlers hand the new
state down to the widgets. Engine calls run in thin workers, one at a time and
in the order the user asked for them; a refused call becomes a notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, tzinfo
from functools import partial
from typing import Any, ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from backend.clock import utc_now
from backend.engine.facade import Engine
from backend.errors import SylkError
from backend.events import EngineEvent
from backend.messages import Message, MessageType
from backend.sessions.models import Session
from screens.choice import ChoiceScreen
from screens.main_screen import MainScreen
from screens.new_session import NewSessionScreen
from sylk_tui.answer_drafts import AnswerDrafts
from sylk_tui.commands import SessionCommands
from sylk_tui.engine_calls import EngineCalls
from sylk_tui.transcript_cache import TranscriptCache
from themes import APP_STYLESHEET, DEFAULT_THEME, register_themes
from widgets.messages import (
    AgentStepped,
    ChoiceRequested,
    EngineNoticePosted,
    ForegroundChanged,
    IndexChanged,
    SessionAdded,
    SessionsLoaded,
    SessionUpdated,
    SubmitSettled,
    TranscriptAppended,
    TranscriptLoaded,
    engine_event_message,
)
from widgets.session_list import SessionList

TRANSCRIPT_LIMIT = 200
"""Messages of a session's transcript read and shown when it comes on screen."""
CACHED_SESSIONS = 24
"""Recently shown transcripts kept in memory, so switching back needs no read."""
ACTIVITY_REFRESH_SECONDS = 30.0
DRAFT_REPAINT_SECONDS = 0.05
LOADING_NOTICE_DELAY = 0.15
"""Seconds a transcript read may take before "Loading…" replaces the previous one."""

EngineMessage = Message[dict[str, Any]]
NOTICE_SEVERITY: dict[str, SeverityLevel] = {
    "info": "information",
    "warning": "warning",
    "error": "error",
}


class SylkApp(EngineCalls, App[None]):
    """Many coding-agent sessions, one terminal."""

    TITLE = "Sylk"
    CSS_PATH = APP_STYLESHEET
    COMMANDS = App.COMMANDS | {SessionCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="app.quit",
            tooltip="Close Sylk. Every session and transcript is kept in the archive.",
            priority=True,
        ),
    ]

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], datetime] = utc_now,
        tz: tzinfo | None = None,
        transcript_limit: int = TRANSCRIPT_LIMIT,
    ) -> None:
        super().__init__()
        register_themes(self)
        self.theme = DEFAULT_THEME
        self.engine = engine
        self.clock = clock
        self.transcript_limit = transcript_limit
        self.sessions: dict[str, Session] = {}
        """Every visible session, in list order (the engine's numbering)."""
        self.foreground_id: str | None = None
        self.viewed_id: str | None = None
        self._main = MainScreen(clock=clock, tz=tz)
        self._cache = TranscriptCache(sessions=CACHED_SESSIONS, messages=transcript_limit)
        self._ops = asyncio.Lock()
        self._wanted_foreground: str | None = None
        self._switching_by_hand = False
        self._pending_line: tuple[str, str] | None = None
        """The line sent from the composer and not yet recorded (session, text)."""
        self._unsubscribe: Callable[[], None] | None = None
        self._detach_questions: Callable[[], None] = lambda: None
        self._drafts = AnswerDrafts(clock)
        self._draft_paint_due = False
        self._index_status: dict[str, str] = {}
        """What each workspace's code index is doing, by workspace path."""

    # -- lifecycle -----------------------------------------------------------------
    async def on_mount(self) -> None:
        self._unsubscribe = self.engine.events.add_listener(self._on_engine_event)
        self._detach_questions = self.engine.attach_questions()
        await self.push_screen(self._main)
        self.set_interval(ACTIVITY_REFRESH_SECONDS, self._main.session_list.refresh)
        self._start()

    async def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._detach_questions()
        await self.engine.aclose()

    # -- engine events -> messages -------------------------------------------------
    def _on_engine_event(self, event: EngineEvent) -> None:
        # "follow" is decided now, while the call that caused the event still runs.
        message = engine_event_message(event, follow=not self._switching_by_hand)
        if message is not None:
            self.post_message(message)

    @on(SessionsLoaded)
    def _sessions_loaded(self, loaded: SessionsLoaded) -> None:
        self.sessions = {s.id: s for s in loaded.sessions if s.closed_at is None}
        self.foreground_id = loaded.foreground_id
        session_list = self._main.session_list
        session_list.set_sessions(self.sessions.values())
        session_list.foreground_id = loaded.foreground_id
        target = loaded.foreground_id or next(iter(self.sessions), None)
        if target is not None and target != self.viewed_id:
            self._view(target)
        self._describe_viewed()

    @on(SessionAdded)
    @on(SessionUpdated)
    def _session_changed(self, changed: SessionAdded | SessionUpdated) -> None:
        session = changed.session
        if session.closed_at is None:
            self.sessions[session.id] = session
        else:
            self.sessions.pop(session.id, None)
        self._main.session_list.upsert(session)
        if session.id == self._main.transcript.session_id:
            self._describe_viewed()

    @on(ForegroundChanged)
    def _foreground_changed(self, changed: ForegroundChanged) -> None:
        self.foreground_id = changed.session_id
        self._main.session_list.foreground_id = changed.session_id
        if changed.follow and changed.session_id not in (None, self.viewed_id):
            self._view(changed.session_id)

    @on(TranscriptAppended)
    def _transcript_appended(self, appended: TranscriptAppended) -> None:
        message = appended.message
        self._cache.append(message)
        self._main.transcript.append(message)  # ignored unless it shows that session
        if (
            self._drafts.answered(message)
            and message.session_id == self._main.transcript.session_id
        ):
            self._paint_draft()
        self._main.session_list.touch(message.session_id, message.timestamp)
        pending = self._pending_line
        if message.type is MessageType.USER_INPUT and pending and pending[0] == message.session_id:
            # Recorded: the line is safe in the transcript, even if an answer takes long.
            self._settle_line(accepted=True)

    @on(AgentStepped)
    def _agent_stepped(self, stepped: AgentStepped) -> None:
        was_working = self._drafts.working(stepped.session_id)
        self._drafts.step(stepped.session_id, stepped.role, stepped.kind, stepped.text)
        if stepped.session_id != self._main.transcript.session_id:
            return
        if was_working != self._drafts.working(stepped.session_id):
            self._paint_draft()  # a turn starts or ends: show it now
        elif not self._draft_paint_due:  # streaming: repaint at most 20 times a second
            self._draft_paint_due = True
            self.set_timer(DRAFT_REPAINT_SECONDS, self._paint_draft)

    def _screen_alive(self) -> bool:
        """Timers may fire while the app shuts down, after the screen lost its widgets."""
        return self._main.is_mounted and len(self._main.query("#transcript")) > 0

    def _paint_draft(self) -> None:
        self._draft_paint_due = False
        if not self._screen_alive():
            return
        shown = self._main.transcript.session_id
        self._main.transcript.set_draft(self._drafts.message(shown))
        self._describe_viewed()

    @on(ChoiceRequested)
    def _choice_requested(self, request: ChoiceRequested) -> None:
        def answered(value: str | None) -> None:
            if not request.answer.done():
                request.answer.set_result(value)

        self.push_screen(ChoiceScreen(request.question), answered)

    @on(IndexChanged)
    def _index_changed(self, changed: IndexChanged) -> None:
        self._index_status[changed.workspace] = changed.text
        self._describe_viewed()

    @on(EngineNoticePosted)
    def _engine_notice(self, notice: EngineNoticePosted) -> None:
        self.notify(notice.text, severity=NOTICE_SEVERITY[notice.level], markup=False)

    # -- the session on screen -----------------------------------------------------
    def _view(self, session_id: str) -> None:
        """Put ``session_id`` on screen: from memory at once, else when read.

        The list, the title and the transcript change together, in one frame:
        until the read ends (a few milliseconds) the screen stays as it was; a
        read that takes longer shows "Loading…" instead.
        """
        self.viewed_id = session_id
        cached = self._cache.get(session_id)
        if cached is not None:
            self._show(session_id, cached)
            return
        self._read(session_id)
        self.set_timer(LOADING_NOTICE_DELAY, partial(self._show_loading, session_id))

    def _show_loading(self, session_id: str) -> None:
        if not self._screen_alive():
            return
        if self.viewed_id == session_id and self._main.transcript.session_id != session_id:
            self._main.transcript.show(session_id, [], placeholder="Loading…")
            self._main.session_list.viewed_id = session_id
            self._describe_viewed()

    def _show(self, session_id: str, messages: list[EngineMessage]) -> None:
        header = ""
        if len(messages) >= self.transcript_limit:
            header = f"Showing the last {len(messages)} messages · `sylk sessions export` has all"
        self._main.transcript.show(
            session_id,
            messages,
            placeholder="No messages yet. Type below; /help lists the commands.",
            header=header,
        )
        self._main.session_list.viewed_id = session_id
        self._paint_draft()
        # Read ahead once this frame is out, so it does not delay it.
        self.call_after_refresh(self._read_neighbours, session_id)

    def _read(self, session_id: str) -> None:
        if not self._cache.loading(session_id):
            self._cache.begin(session_id)
            self._load_transcript(session_id)

    def _read_neighbours(self, session_id: str) -> None:
        """Read the sessions next/previous would show, so those keys need no wait."""
        ids = list(self.sessions)
        if session_id not in self.sessions or len(ids) < 2:
            return
        here = ids.index(session_id)
        for step in (1, -1):
            neighbour = ids[(here + step) % len(ids)]
            if neighbour not in self._cache:
                self._read(neighbour)

    @on(TranscriptLoaded)
    def _transcript_loaded(self, loaded: TranscriptLoaded) -> None:
        messages = self._cache.complete(loaded.session_id, loaded.messages)
        if messages is None:  # the read failed; the error is shown as a notification
            if loaded.session_id == self.viewed_id:
                self._main.transcript.show(loaded.session_id, [], placeholder="Not readable.")
                self._main.session_list.viewed_id = loaded.session_id
                self._describe_viewed()
            return
        if loaded.session_id == self.viewed_id:
            self._show(loaded.session_id, messages)
        else:
            self._main.transcript.prepare(messages)

    def _describe_viewed(self) -> None:
        """Title the transcript with the session it shows (the one selected, a frame later)."""
        session = self.sessions.get(self._main.transcript.session_id or "")
        number = list(self.sessions).index(session.id) + 1 if session is not None else None
        working = self._drafts.working(self._main.transcript.session_id)
        index = self._index_status.get(session.workspace) if session is not None else None
        self._main.describe(session, number, working=working, index=index)

    # -- actions (the keys of MainScreen and the command palette) -------------------
    def action_new_session(self) -> None:
        self.push_screen(NewSessionScreen(), self._new_session_named)

    def _new_session_named(self, name: str | None) -> None:
        if name is not None:
            self._create_session(name or None)

    def action_next_session(self) -> None:
        self._step(1)

    def action_previous_session(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        ids = list(self.sessions)
        if not ids:
            return
        here = ids.index(self.viewed_id) if self.viewed_id in self.sessions else -delta
        self.action_switch_to(ids[(here + delta) % len(ids)])

    def action_jump(self, number: int) -> None:
        ids = list(self.sessions)
        if 1 <= number <= len(ids):
            self.action_switch_to(ids[number - 1])
        else:
            self.notify(f"There is no session {number}.", severity="warning", markup=False)

    def action_switch_to(self, session_id: str) -> None:
        """Show ``session_id`` now and bring it to the front (a finished one is only shown)."""
        session = self.sessions.get(session_id)
        if session is None:
            return
        if session_id != self.viewed_id:
            self._view(session_id)
        if session.is_terminal:
            self._wanted_foreground = None
            return
        self._wanted_foreground = session_id
        if session_id != self.foreground_id:
            self._switch(session_id)

    def action_interrupt(self) -> None:
        """Stop the answer being written in the session on screen, if any."""
        if self.viewed_id is not None and self.engine.cancel_turn(self.viewed_id):
            self.notify("Stopping the answer…", markup=False)
        else:
            self._main.composer.focus()

    def action_suspend_session(self) -> None:
        if self.viewed_id is not None:
            self._lifecycle("suspend", self.viewed_id)

    def action_resume_session(self) -> None:
        if self.viewed_id is not None:
            self._wanted_foreground = self.viewed_id
            self._lifecycle("resume", self.viewed_id)

    def action_complete_session(self) -> None:
        if self.viewed_id is not None:
            self._lifecycle("complete", self.viewed_id)

    @on(SessionList.Picked)
    def _session_picked(self, picked: SessionList.Picked) -> None:
        self.action_switch_to(picked.session_id)

    @on(Input.Submitted, "#composer")
    def _composer_submitted(self, submitted: Input.Submitted) -> None:
        submitted.stop()
        if not submitted.value.strip() or self.viewed_id is None or self._pending_line:
            return
        self._pending_line = (self.viewed_id, submitted.value)
        self._submit(self.viewed_id, submitted.value)

    @on(SubmitSettled)
    def _submit_settled(self, settled: SubmitSettled) -> None:
        if self._pending_line == (settled.session_id, settled.text):
            self._settle_line(accepted=settled.accepted)

    def _settle_line(self, *, accepted: bool) -> None:
        """The pending line was recorded (clear it) or refused (keep it to edit)."""
        if self._pending_line is None:
            return
        _, text = self._pending_line
        self._pending_line = None
        if accepted:
            self._main.composer.accepted(text)

    # -- a refused call becomes a notification ---------------------------------------
    @on(Worker.StateChanged)
    def _worker_failed(self, changed: Worker.StateChanged) -> None:
        if changed.state is not WorkerState.ERROR:
            return
        error = changed.worker.error
        if isinstance(error, SylkError):
            # Engine messages carry usage like "[NAME]": show them verbatim.
            self.notify(str(error), severity="error", markup=False)
        else:
            self.log.error(f"{changed.worker.description} failed: {error!r}")
            self.notify(
                f"Could not {changed.worker.description}: {error!r}",
                title="Unexpected error",
                severity="error",
                markup=False,
            )
