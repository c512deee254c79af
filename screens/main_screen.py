"""The main screen: sessions on the left, the transcript of one in the middle,
the composer below it and the keys in the footer.

The screen subscribes to the UI state (``screens.state.store.UiState``) and hands what
changed down to its widgets. Its keys are its own actions: what needs the engine
is posted as an intent (``screens.state.intents``) that the app carries out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from backend.session_states import SessionState
from screens.main_bindings import MAIN_BINDINGS, OPTION_DIGIT_KEYS
from screens.session_commands import SessionCommands
from screens.session_manage import SessionManageScreen
from screens.sessions.new_session import NewSessionScreen
from screens.state.intents import LoadOlder, NewSession, SendLine, SessionAction, SessionVerb
from screens.state.pending import PendingChanged
from screens.state.store import (
    DraftChanged,
    LineSettled,
    OlderShown,
    Shown,
    UiState,
)
from widgets.composer import Composer
from widgets.composer.completion import CompletionSources
from widgets.composer.history import sent_lines
from widgets.inbox_badge import InboxBadge
from widgets.session_list import SessionList
from widgets.status_bar import StatusBar
from widgets.team_indicator import TeamIndicator
from widgets.transcript import Transcript

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.sessions.models import Session
    from screens.state.store import EngineMessage

ACTIVITY_REFRESH_SECONDS = 30.0
"""How often the list's "5m ago" column is redrawn."""
DRAFT_REPAINT_SECONDS = 0.05
"""A streamed answer is repainted at most this often (20 times a second)."""


def _placeholder(session: Session | None) -> str:
    if session is None:
        return ""
    if session.state is SessionState.ACTIVE:
        return f"Message {session.name}  (/help lists the commands)"
    if session.state in (SessionState.SUSPENDED, SessionState.CREATED):
        return f"{session.name} is {session.state.value}: alt+r resumes it; /commands still work"
    return f"{session.name} is {session.state.value} (read only); /session new starts another"


class MainScreen(SessionManageScreen):
    CSS_PATH = Path(__file__).with_name("main_screen.tcss")
    COMMANDS = Screen.COMMANDS | {SessionCommands}

    BINDINGS: ClassVar[list[BindingType]] = MAIN_BINDINGS

    def __init__(
        self, state: UiState, *, clock: Callable[[], datetime], tz: tzinfo | None = None
    ) -> None:
        super().__init__()
        self.state = state
        self._clock = clock
        self._tz = tz
        self._draft_paint_due = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield SessionList(id="session-list", clock=self._clock)
            with Vertical(id="conversation"):
                yield Transcript(id="transcript", tz=self._tz)
                yield Composer(id="composer", reserved_keys=OPTION_DIGIT_KEYS)
        yield InboxBadge(id="inbox-badge")
        yield TeamIndicator(id="team-indicator")  # no room taken unless teammates work here
        yield StatusBar(id="status-bar")
        yield Footer()

    def on_mount(self) -> None:
        self.session_list.border_title = "Sessions"
        self.composer.focus()
        state = self.state
        self.composer.sources = CompletionSources(
            session_names=lambda: [s.name for s in state.sessions.values()],
            workspace=self._viewed_workspace,
        )
        state.sessions_signal.subscribe(self, self._sessions_changed)
        state.foreground_signal.subscribe(self, self._foreground_changed)
        state.shown_signal.subscribe(self, self._shown)
        state.appended_signal.subscribe(self, self._appended)
        state.prepared_signal.subscribe(self, self._prepared)
        state.draft_signal.subscribe(self, self._draft_changed)
        state.index_signal.subscribe(self, self._index_changed)
        state.line_signal.subscribe(self, self._line_settled)
        self.attach_session_manage()  # list markers, status bar, sidebar (screens/session_manage)
        state.pending.signal.subscribe(self, self._pending_changed)
        state.older_signal.subscribe(self, self._older_shown)
        self.set_interval(ACTIVITY_REFRESH_SECONDS, self.session_list.refresh)
        if state.sessions:  # state that arrived before the screen did
            self._sessions_changed(None)
            self._foreground_changed(state.foreground_id)

    @property
    def session_list(self) -> SessionList:
        return self.query_one("#session-list", SessionList)

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def composer(self) -> Composer:
        return self.query_one("#composer", Composer)

    def describe(
        self,
        session: Session | None,
        number: int | None,
        *,
        working: str | None = None,
        index: str | None = None,
    ) -> None:
        """Title the transcript with the session on screen and hint what typing does."""
        transcript = self.transcript
        if session is None:
            transcript.border_title = ""
            transcript.border_subtitle = ""
        else:
            prefix = f"{number} · " if number is not None else ""
            transcript.border_title = f"{prefix}{session.name}"
            state = session.state.value if not index else f"{session.state.value} · {index}"
            transcript.border_subtitle = f"{working} is answering · esc stops" if working else state
        self.composer.placeholder = _placeholder(session)
        count = len(self.session_list.sessions)
        subtitle = f"{count} in all" if count else ""
        if self.session_list.border_subtitle != subtitle:  # setting it repaints the list
            self.session_list.border_subtitle = subtitle

    def action_scroll_transcript(self, direction: int) -> None:
        if direction < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_toggle_block(self) -> None:
        if not self.transcript.toggle_selected():
            self.notify("No tool block to fold here.", markup=False)

    def action_toggle_all_blocks(self) -> None:
        self.transcript.toggle_all_blocks()

    def action_open_inbox(self) -> None:
        """What waits on the user, from every session (see ``screens.approvals_inbox``)."""
        from screens.approvals_inbox import ApprovalsInbox  # loads when first opened

        if not isinstance(self.app.screen, ApprovalsInbox):
            self.app.push_screen(ApprovalsInbox(self.state, tz=self._tz))

    def _pending_changed(self, changed: PendingChanged) -> None:
        self.query_one("#inbox-badge", InboxBadge).count = changed.count

    def action_copy_block(self) -> None:
        self.transcript.action_copy_block()

    # -- the state, as it changes --------------------------------------------------
    def _sessions_changed(self, session: Session | None) -> None:
        if session is None:  # the whole list is new
            self.session_list.set_sessions(self.state.sessions.values())
            self._describe_shown()
            return
        self.session_list.upsert(session)
        if session.id == self.transcript.session_id:
            self._describe_shown()

    def _foreground_changed(self, session_id: str | None) -> None:
        self.session_list.foreground_id = session_id

    def _shown(self, shown: Shown) -> None:
        # The list, the title and the transcript change together, in one frame.
        self.transcript.show(
            shown.session_id,
            shown.messages,
            placeholder=shown.placeholder,
            header=shown.header,
            more_above=shown.more,
        )
        self.session_list.viewed_id = shown.session_id
        sent = sent_lines(shown.messages) if shown.ready else None
        self.composer.show_session(shown.session_id, sent)
        if shown.ready:
            self._paint_draft()
        else:
            self._describe_shown()

    def _appended(self, message: EngineMessage) -> None:
        self.transcript.append(message)  # ignored unless it shows that session
        self.session_list.touch(message.session_id, message.timestamp)

    def _prepared(self, messages: list[EngineMessage]) -> None:
        self.transcript.prepare(messages)

    def _older_shown(self, older: OlderShown) -> None:
        self.transcript.prepend(
            older.session_id, older.messages, more=older.more, header=older.header
        )

    @on(Transcript.OlderWanted)
    def _older_wanted(self, wanted: Transcript.OlderWanted) -> None:
        wanted.stop()
        shown = len(self.transcript.messages)
        self.post_message(LoadOlder(wanted.session_id, wanted.first_id, shown))

    def _draft_changed(self, changed: DraftChanged) -> None:
        if changed.session_id != self.transcript.session_id:
            return
        if changed.at_once:
            self._paint_draft()
        elif not self._draft_paint_due:  # streaming: repaint at most 20 times a second
            self._draft_paint_due = True
            self.set_timer(DRAFT_REPAINT_SECONDS, self._paint_draft)

    def _paint_draft(self) -> None:
        self._draft_paint_due = False
        self.transcript.set_draft(self.state.drafts.message(self.transcript.session_id))
        self._describe_shown()

    def _index_changed(self, _workspace: str) -> None:
        self._describe_shown()

    def _line_settled(self, settled: LineSettled) -> None:
        if settled.accepted:
            self.composer.accepted(settled.text, settled.session_id)

    def _describe_shown(self) -> None:
        """Title the transcript with the session it shows (the one selected, a frame later)."""
        shown = self.transcript.session_id
        session = self.state.sessions.get(shown or "")
        self.describe(
            session,
            self.state.number(shown),
            working=self.state.drafts.working(shown),
            index=self.state.index_text(session),
        )

    # -- actions (the keys, the command palette, the list and the composer) ----------
    def action_new_session(self) -> None:
        self.app.push_screen(NewSessionScreen(), self._new_session_named)

    def _new_session_named(self, name: str | None) -> None:
        if name is not None:
            self.post_message(NewSession(name or None))

    def action_dag_view(self) -> None:
        session = self.state.sessions.get(self.state.viewed_id or "")
        if session is not None:
            from screens.plans.dag_view import DagViewScreen  # loads when first opened

            view = DagViewScreen(self.state.plans, session.id, session_name=session.name)
            self.app.push_screen(view)

    def action_next_session(self) -> None:
        self._act("next")

    def action_previous_session(self) -> None:
        self._act("previous")

    def action_jump(self, number: int) -> None:
        session_id = self.state.session_at(number)
        if session_id is None:
            self.notify(f"There is no session {number}.", severity="warning", markup=False)
        else:
            self.switch_to(session_id)

    def switch_to(self, session_id: str) -> None:
        """Show ``session_id`` now and bring it to the front (a finished one is only shown)."""
        self._act("switch", session_id)

    def action_suspend_session(self) -> None:
        self._act("suspend")

    def action_resume_session(self) -> None:
        self._act("resume")

    def action_interrupt(self) -> None:
        """Stop the answer being written in the session on screen; else back to the composer."""
        if self.state.drafts.working(self.state.viewed_id) is None:
            self.composer.focus()
        self._act("stop")

    def _act(self, kind: SessionVerb, session_id: str | None = None) -> None:
        self.post_message(SessionAction(kind, session_id))

    @on(SessionList.Picked)
    def _session_picked(self, picked: SessionList.Picked) -> None:
        picked.stop()
        self.switch_to(picked.session_id)

    @on(Composer.Submitted, "#composer")
    def _composer_submitted(self, submitted: Composer.Submitted) -> None:
        submitted.stop()
        viewed = self.state.viewed_id
        if submitted.text.strip() and viewed is not None:
            self.post_message(SendLine(viewed, submitted.text))

    def _viewed_workspace(self) -> Path | None:
        session = self.state.sessions.get(self.state.viewed_id or "")
        return Path(session.workspace) if session is not None and session.workspace else None
