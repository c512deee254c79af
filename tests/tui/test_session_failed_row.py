"""A failed session's row says why on its second line (the reason its failure kept)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult

from backend.sessions.models import Session, SessionState
from backend.sessions.phases import SessionPhase
from widgets.session_list import SessionList

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


class _ListApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionList(clock=lambda: NOW)


async def test_a_failed_row_shows_its_reason_and_a_live_one_none() -> None:
    failed = Session(name="lost", workspace="/w", state=SessionState.FAILED,
                     phase=SessionPhase.IDLE, last_active_at=NOW - timedelta(hours=2),
                     metadata={"failure": "its workspace /w is gone"})  # fmt: skip
    live = Session(name="fine", workspace="/w", state=SessionState.ACTIVE,
                   phase=SessionPhase.IDLE, last_active_at=NOW - timedelta(hours=2),
                   metadata={"failure": "an old reason"})  # fmt: skip
    app = _ListApp()
    async with app.run_test(size=(62, 6)) as pilot:
        session_list = app.query_one(SessionList)
        session_list.set_sessions([failed, live])
        await pilot.pause()
        lines = [session_list.render_line(n).text.rstrip() for n in range(4)]
        assert lines[1] == "        failed · its workspace /w is gone"
        assert lines[3] == "        active"
