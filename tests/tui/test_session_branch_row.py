"""The session list's second line names a session's own branch (``backend.worktrees``)."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.app import App, ComposeResult

from backend.sessions.models import Session, SessionState
from widgets.session_list import SessionList

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


class _ListApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionList(clock=lambda: NOW)


async def test_an_isolated_session_shows_its_branch_and_a_plain_one_none() -> None:
    app = _ListApp()
    async with app.run_test(size=(60, 6)) as pilot:
        session_list = app.query_one(SessionList)
        isolated = Session(
            name="fix", workspace="/d/wt", state=SessionState.ACTIVE, last_active_at=NOW,
            branch_name="sylk/fix-0123abcd", base_branch="main",
        )  # fmt: skip
        plain = Session(name="chat", workspace="/w", state=SessionState.ACTIVE, last_active_at=NOW)
        session_list.set_sessions([isolated, plain])
        await pilot.pause()
        lines = [session_list.render_line(n).text.rstrip() for n in range(4)]
        assert lines[1] == "        active · ⎇ sylk/fix-0123abcd"
        assert lines[3] == "        active"
