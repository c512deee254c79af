"""SylkApp: the Textual shell around one Engine, and its bridge to the UI.

The app is the only part of the UI that talks to the engine. Engine events become
Textual messages (``sylk_tui.engine_link.messages``), which the app applies to the UI
state (``screens.state.store.UiState``); screens subscribe to the state for what they
show. Screens own their keys and post intents (``screens.state.intents``), which the
app carries out once through its ``EngineBridge``; a refused call becomes a
notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.binding import Binding, BindingType
from textual.worker import Worker, WorkerState

from backend.clock import utc_now
from backend.errors import SylkError
from screens.main_screen import MainScreen
from screens.sessions.merge_offer import MergeOffers
from screens.state.intents import AnswerQuestion, LoadOlder, NewSession, SendLine, SessionAction
from screens.state.plan_view import PlanTraffic
from screens.state.store import TRANSCRIPT_LIMIT, UiState
from sylk_tui.app_actions import FrontActions
from sylk_tui.engine_link.bridge import EngineBridge
from sylk_tui.engine_link.messages import (
    AgentStepped,
    ChoiceRequested,
    EngineNoticePosted,
    ForegroundChanged,
    IndexChanged,
    OlderLoaded,
    QuestionClosed,
    SessionAdded,
    SessionsLoaded,
    SessionUpdated,
    SubmitSettled,
    TranscriptAppended,
    TranscriptLoaded,
    engine_message,
)
from sylk_tui.export.app_export import ExportActions
from sylk_tui.plan_follow import PlanFollow
from sylk_tui.question_dialogs import QuestionDialogs
from sylk_tui.status_feed import StatusFeed
from sylk_tui.team_view import TeamChanged, TeamView
from themes import APP_STYLESHEET

if TYPE_CHECKING:  # built by the caller, or lazily (see EngineBridge): not imported here
    from backend.engine import Engine
    from backend.events import EngineEvent

LOADING_NOTICE_DELAY = 0.15
"""Seconds a transcript read may take before "Loading…" replaces the previous one."""


class SylkApp(ExportActions, FrontActions):
    """Many coding-agent sessions, one terminal."""

    TITLE = "Sylk"
    CSS_PATH = APP_STYLESHEET
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
        engine: Engine | Callable[[], Engine],
        *,
        clock: Callable[[], datetime] = utc_now,
        tz: tzinfo | None = None,
        transcript_limit: int = TRANSCRIPT_LIMIT,
        keymap: Mapping[str, object] | None = None,
        theme_file: Path | None = None,
    ) -> None:
        super().__init__()
        self.setup_front(keymap, theme_file)  # themes, the one chosen last, the user's keys
        self.state = UiState(self, clock=clock, transcript_limit=transcript_limit)
        self.bridge = EngineBridge(
            self, engine, transcript_limit=transcript_limit, on_ready=self._engine_ready
        )
        self.questions = QuestionDialogs(self, self.state.pending, self._on_screen)
        self.plan_follow = PlanFollow(self, self.bridge, self.state.plans)
        self.status_feed = StatusFeed(self, self.state, lambda: self.bridge.engine)
        self.merge_offers = MergeOffers(self)  # completing an isolated session asks to merge
        self.team_view = TeamView(self, clock)  # teammates' sessions: the indicator, /team
        self._main = MainScreen(self.state, clock=clock, tz=tz)
        self._unsubscribe: Callable[[], None] = lambda: None
        self._detach_questions: Callable[[], None] = lambda: None

    # -- lifecycle -----------------------------------------------------------------
    async def on_mount(self) -> None:
        await self.push_screen(self._main)
        self.status_feed.attach()
        self.bridge.start()
        self._check_keymap()

    def _engine_ready(self, engine: Engine) -> None:
        self._unsubscribe = engine.events.add_listener(self._on_engine_event)
        self._detach_questions = engine.attach_questions()
        self.team_view.attach(engine)
        self.run_worker(self._warn_if_unconfined(), group="sandbox", exit_on_error=False)

    async def _warn_if_unconfined(self) -> None:
        """Where no sandbox confines commands, say so once, up front (and /status says why)."""
        from backend.sandbox import sandbox_support  # probed once, off the UI thread

        support = await asyncio.to_thread(sandbox_support)
        if not support.confined:
            self.notify(
                f"No sandbox on this machine: {support.detail}. See /status.",
                title="Commands run unconfined",
                severity="warning",
                timeout=20,
                markup=False,
            )

    @property
    def startup_error(self) -> Exception | None:
        """Why the engine could not be built (the app then ended at once), if it could not."""
        return self.bridge.startup_error

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseDown):
            self.bridge.collector.input()  # full collections wait until input is quiet
        await super().on_event(event)

    async def on_unmount(self) -> None:
        self._unsubscribe()
        self._detach_questions()
        await self.bridge.aclose()

    # -- engine events -> messages -> the UI state ------------------------------------
    def _on_engine_event(self, event: EngineEvent) -> None:
        # Whether the switch is the user's own is decided now, while the call that
        # caused the event still runs.
        message = engine_message(event, by_hand=self.bridge.switches.steering)
        if message is not None:
            self.post_message(message)

    @on(SessionsLoaded)
    def _sessions_loaded(self, loaded: SessionsLoaded) -> None:
        target = self.state.load(loaded.sessions, loaded.foreground_id)
        if target is not None:
            self._view(target)

    @on(SessionAdded)
    @on(SessionUpdated)
    def _session_changed(self, changed: SessionAdded | SessionUpdated) -> None:
        self.state.upsert(changed.session)
        if isinstance(changed, SessionUpdated) and changed.operation == "complete":
            self.merge_offers.completed(changed.session)

    @on(ForegroundChanged)
    def _foreground_changed(self, changed: ForegroundChanged) -> None:
        self.state.set_foreground(changed.session_id)
        if changed.follow and changed.session_id not in (None, self.state.viewed_id):
            self._view(changed.session_id)

    @on(TranscriptAppended)
    def _transcript_appended(self, appended: TranscriptAppended) -> None:
        self.state.append(appended.message)
        self.merge_offers.heard(appended.message)

    @on(AgentStepped)
    def _agent_stepped(self, stepped: AgentStepped) -> None:
        self.state.step(stepped.session_id, stepped.role, stepped.kind, stepped.text, stepped.data)

    @on(IndexChanged)
    def _index_changed(self, changed: IndexChanged) -> None:
        self.state.set_index(changed.workspace, changed.text)

    @on(ChoiceRequested)
    def _choice_requested(self, request: ChoiceRequested) -> None:
        self.questions.asked(request)

    def _on_screen(self, session_id: str | None) -> bool:
        """A question from this session may open its dialog (a background one waits)."""
        return session_id is None or session_id == self.state.viewed_id

    @on(AnswerQuestion)
    def _answer_question(self, answer: AnswerQuestion) -> None:
        answer.stop()
        self.questions.answer(answer.question_id, answer.value)

    @on(QuestionClosed)
    def _question_closed(self, closed: QuestionClosed) -> None:
        self.questions.settled(closed.question_id)

    @on(PlanTraffic)
    def _plan_traffic(self, traffic: PlanTraffic) -> None:
        traffic.stop()  # the DAG view's events and asks
        self.plan_follow.handle(traffic)

    @on(TeamChanged)
    def _team_changed(self, _changed: TeamChanged) -> None:
        self.team_view.refresh()

    def action_team(self, _rest: str = "") -> None:
        """``/team``: every teammate's open session (owner, name, state; never content)."""
        self.team_view.open()

    @on(EngineNoticePosted)
    def _engine_notice(self, notice: EngineNoticePosted) -> None:
        self.plan_follow.toast(notice)  # a plan's notice replaces that plan's older toast

    # -- the session on screen -----------------------------------------------------
    def _view(self, session_id: str) -> None:
        """Put ``session_id`` on screen: from memory at once, else when read.

        Until the read ends (a few milliseconds) the screen stays as it was; a
        read that takes longer shows "Loading…" instead.
        """
        if self.state.view(session_id):
            self._read_ahead_after_refresh(session_id)
            return
        self._read(session_id)
        self.set_timer(LOADING_NOTICE_DELAY, partial(self.state.show_loading, session_id))

    def _read(self, session_id: str) -> None:
        if self.state.begin_read(session_id):
            self.bridge.load_transcript(session_id)

    def _read_ahead_after_refresh(self, session_id: str) -> None:
        """Read the sessions next/previous would show, so those keys need no wait;
        once this frame is out, so it does not delay it."""

        def read_ahead() -> None:
            for neighbour in self.state.read_ahead(session_id):
                self._read(neighbour)

        self.call_after_refresh(read_ahead)

    @on(LoadOlder)
    def _load_older(self, wanted: LoadOlder) -> None:
        wanted.stop()
        self.bridge.load_older(wanted.session_id, wanted.first_id, wanted.shown)

    @on(OlderLoaded)
    def _older_loaded(self, loaded: OlderLoaded) -> None:
        self.state.older_loaded(loaded.session_id, loaded.messages, loaded.more)

    @on(TranscriptLoaded)
    def _transcript_loaded(self, loaded: TranscriptLoaded) -> None:
        if self.state.loaded(loaded.session_id, loaded.messages):
            self._read_ahead_after_refresh(loaded.session_id)

    # -- intents from the screens --------------------------------------------------
    @on(SessionAction)
    def _session_action(self, action: SessionAction) -> None:
        action.stop()
        session_id = action.session_id or self.state.viewed_id
        if action.kind in ("next", "previous"):
            session_id = self.state.step_from_viewed(1 if action.kind == "next" else -1)
        if session_id is None:
            return
        match action.kind:
            case "switch" | "next" | "previous":
                self._switch_to(session_id)
            case "stop":
                if self.bridge.stop_answer(session_id):
                    self.notify("Stopping the answer…", markup=False)
            case "resume":
                self.bridge.switches.forget()  # resuming brings this one to the front
                self.bridge.lifecycle("resume", session_id)
            case "suspend" | "complete" | "delete":
                self.bridge.lifecycle(action.kind, session_id)
            case "rename" if action.name:
                self.bridge.rename(session_id, action.name)

    def _switch_to(self, session_id: str) -> None:
        session = self.state.sessions.get(session_id)
        if session is None:
            return
        if session_id != self.state.viewed_id:
            self._view(session_id)
        if session.is_terminal:
            self.bridge.switches.forget()  # a finished session is only looked at
        else:
            self.bridge.bring_to_front(session_id)

    @on(NewSession)
    def _new_session(self, new: NewSession) -> None:
        new.stop()
        self.bridge.create_session(new.name)

    @on(SendLine)
    def _send_line(self, line: SendLine) -> None:
        line.stop()
        if self.state.begin_line(line.session_id, line.text):
            local = self.answer_locally(line.text)  # /help, /theme, an unknown command
            if local is not None:
                self.state.settle_line(line.session_id, line.text, accepted=local)
            else:
                self.bridge.submit(line.session_id, line.text)

    @on(SubmitSettled)
    def _submit_settled(self, settled: SubmitSettled) -> None:
        self.state.settle_line(settled.session_id, settled.text, accepted=settled.accepted)

    # -- a refused call becomes a notification ---------------------------------------
    @on(Worker.StateChanged)
    def _worker_failed(self, changed: Worker.StateChanged) -> None:
        if changed.state is not WorkerState.ERROR:
            return
        error = changed.worker.error
        engine = self.bridge.engine
        # A provider's error may quote the key it was sent: never on screen or in the log.
        shown = engine.redactor.text if engine is not None else str
        if isinstance(error, SylkError):
            # Engine messages carry usage like "[NAME]": show them verbatim.
            self.notify(shown(str(error)), severity="error", markup=False)
        else:
            self.log.error(shown(f"{changed.worker.description} failed: {error!r}"))
            self.notify(
                shown(f"Could not {changed.worker.description}: {error!r}"),
                title="Unexpected error",
                severity="error",
                markup=False,
            )
