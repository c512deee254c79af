"""Each session's activity marker in the list, worked out from the UI state.

Working (an answer is being written), waiting for you (a question is pending),
unread (something arrived while another session was on screen), done, failed: the
most urgent one shows (``widgets.session_list.activity_of``). Each change repaints
one row, so hundreds of sessions cost nothing while they are quiet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.dom import DOMNode

from backend.message_types import MessageType
from backend.session_states import SessionState
from screens.state.pending import PendingChanged
from screens.state.store import DraftChanged, Shown, UiState
from widgets.session_list import SessionList, activity_of

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.sessions.models import Session
    from screens.state.store import EngineMessage

UNREAD_SKIPS = frozenset({MessageType.USER_INPUT})
"""What the user typed is never unread."""


class SessionMarks:
    def __init__(self, state: UiState, session_list: SessionList) -> None:
        self._state = state
        self._list = session_list
        self._unread: set[str] = set()

    def attach(self, node: DOMNode) -> None:
        """Follow the state's signals (``node``: the screen that shows the list)."""
        state = self._state
        state.sessions_signal.subscribe(node, self._session_changed)
        state.draft_signal.subscribe(node, self._draft_changed)
        state.appended_signal.subscribe(node, self._appended)
        state.shown_signal.subscribe(node, self._shown)
        state.pending.signal.subscribe(node, self._pending_changed)
        self.update_all()

    def unread(self, session_id: str) -> bool:
        return session_id in self._unread

    def update(self, session_id: str | None) -> None:
        session = self._state.sessions.get(session_id or "")
        if session is None:
            return
        state = self._state
        self._list.mark(
            session.id,
            activity_of(
                waiting=bool(state.pending.items(session.id)),
                working=state.drafts.working(session.id) is not None,
                failed=session.state is SessionState.FAILED,
                unread=session.id in self._unread,
                done=session.state is SessionState.COMPLETED,
            ),
        )

    def update_all(self) -> None:
        for session_id in self._state.sessions:
            self.update(session_id)

    def _session_changed(self, session: Session | None) -> None:
        if session is None:
            self.update_all()
        elif session.closed_at is not None:
            self._unread.discard(session.id)
        else:
            self.update(session.id)

    def _draft_changed(self, changed: DraftChanged) -> None:
        self.update(changed.session_id)

    def _appended(self, message: EngineMessage) -> None:
        if message.type in UNREAD_SKIPS or message.session_id == self._state.shown_id:
            return
        if message.session_id not in self._unread:
            self._unread.add(message.session_id)
            self.update(message.session_id)

    def _shown(self, shown: Shown) -> None:
        if shown.session_id in self._unread:
            self._unread.discard(shown.session_id)
            self.update(shown.session_id)

    def _pending_changed(self, changed: PendingChanged) -> None:
        self.update(changed.session_id)
