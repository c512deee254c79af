"""The main screen's session keys that ask first or change the layout: complete, close
and delete (each confirmed), rename, the list's filter, and the sidebar shown or hidden.

``SessionManageScreen`` is the main screen's base: it holds these actions and the
pieces that follow the state for the list and the status bar (``attach_session_manage``),
so the main screen only composes and wires them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.screen import Screen

from screens.session_marks import SessionMarks
from screens.sessions.confirm import ConfirmScreen
from screens.sessions.rename_session import RenameSessionScreen
from screens.state.intents import SendLine, SessionAction
from screens.state.store import UiState
from widgets.session_list import RowUsage, SessionList
from widgets.status_bar import StatusBar, total_tokens

if TYPE_CHECKING:  # the engine loads after the first frame
    from backend.engine.status_facts import StatusFacts
    from backend.sessions.models import Session

NARROW_COLUMNS = 100
"""Below this many columns the sidebar hides by itself (and shows again when wider)."""


class SessionManageScreen(Screen[None]):
    state: UiState

    def attach_session_manage(self) -> None:
        """Follow the state for the list's markers and the status bar (once mounted)."""
        self.marks = SessionMarks(self.state, self.session_list)
        self.marks.attach(self)
        self.state.status.signal.subscribe(self, self._status_read)
        self.state.sessions_signal.subscribe(self, self._maybe_deleted)
        self._sidebar_hidden_by_user = False
        self._deleted_at: int | None = None
        self.fit_sidebar(self.size.width)

    @property
    def session_list(self) -> SessionList:
        return self.query_one("#session-list", SessionList)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one("#status-bar", StatusBar)

    def _target(self) -> Session | None:
        """The session a key acts on: the row under the cursor while the list has the
        focus, else the one on screen."""
        listed = self.session_list
        session_id = self.state.viewed_id
        if listed.has_focus and 0 <= listed.cursor < len(listed.shown):
            session_id = listed.shown[listed.cursor].id
        return self.state.sessions.get(session_id or "")

    # -- complete and delete: asked first --------------------------------------------
    def action_complete_session(self) -> None:
        session = self._target()
        if session is None:
            return
        if session.is_terminal:
            self.notify(f"{session.name!r} is {session.state.value} already.", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(SessionAction("complete", session.id))

        question = ConfirmScreen(
            f"Complete {session.name!r}?",
            "It is done for good: it stays readable, but takes no more requests.",
            yes="Complete",
        )
        self.app.push_screen(question, answered)

    def action_close_session(self) -> None:
        """Close the session for good (``/session close``), after the user confirms."""
        session = self._target()
        if session is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._deleted_at = self.state.number(session.id)
                self.post_message(SendLine(session.id, f"/session close {session.id}"))

        question = ConfirmScreen(
            f"Close {session.name!r}?",
            "It leaves the list and its agents stop; the archive keeps it. Refused while "
            "it answers or runs a plan.",
            yes="Close",
        )
        self.app.push_screen(question, answered)

    def action_delete_session(self) -> None:
        session = self._target()
        if session is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._deleted_at = self.state.number(session.id)
                self.post_message(SessionAction("delete", session.id))

        question = ConfirmScreen(
            f"Delete {session.name!r}?",
            "Its transcript, plans and usage are removed from the archive; this cannot be undone.",
            yes="Delete",
        )
        self.app.push_screen(question, answered)

    def _maybe_deleted(self, session: Session | None) -> None:
        """The session on screen went (deleted or closed): show the one that took its row."""
        if session is None or session.closed_at is None or session.id != self.state.viewed_id:
            return
        number = min(self._deleted_at or 1, len(self.state.sessions))
        self._deleted_at = None
        following = self.state.session_at(number)
        if following is not None:
            self.post_message(SessionAction("switch", following))

    # -- rename ---------------------------------------------------------------------
    def action_rename_session(self) -> None:
        session = self._target()
        if session is None:
            return

        def renamed(name: str | None) -> None:
            if name:
                self.post_message(SessionAction("rename", session.id, name=name))

        self.app.push_screen(RenameSessionScreen(session.name), renamed)

    # -- the filter and the sidebar ----------------------------------------------------
    def action_filter_sessions(self) -> None:
        self._show_sidebar(True)
        self.session_list.start_filter()

    def action_toggle_sidebar(self) -> None:
        shown = not self.session_list.display
        self._sidebar_hidden_by_user = not shown
        self._show_sidebar(shown)

    def _show_sidebar(self, shown: bool) -> None:
        listed = self.session_list
        if listed.display == shown:
            return
        if not shown and listed.has_focus:
            self.focus_next()
        listed.display = shown

    def fit_sidebar(self, width: int) -> None:
        """Narrow: hide the list; wide again: show it, unless the user hid it."""
        if width < NARROW_COLUMNS:
            self._show_sidebar(False)
        elif not self._sidebar_hidden_by_user:
            self._show_sidebar(True)

    def on_resize(self, event: events.Resize) -> None:
        if hasattr(self, "marks"):  # attached: the screen is mounted
            self.fit_sidebar(event.size.width)

    # -- the status bar ---------------------------------------------------------------
    def _status_read(self, facts: StatusFacts) -> None:
        if facts.session_id == self.state.viewed_id:
            self.status_bar.show(facts)
        self.session_list.set_usage(
            {
                sid: RowUsage(total_tokens(usage), usage.cost_usd, usage.complete_cost)
                for sid, usage in facts.by_session.items()
                if usage.calls
            }
        )
