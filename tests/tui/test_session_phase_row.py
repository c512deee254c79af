"""The session list shows each session's phase under its name, and follows a move live."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult

from backend.engine import Engine
from backend.sessions.models import Session, SessionState
from backend.sessions.phases import SessionPhase
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, settle, wait_for
from widgets.session_list import PHASE_MARKS, SessionList

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
P = SessionPhase


class _ListApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionList(clock=lambda: NOW)


def _session(name: str, state: SessionState, phase: SessionPhase) -> Session:
    return Session(
        name=name, workspace="/w", state=state, phase=phase, last_active_at=NOW - timedelta(hours=2)
    )


def test_every_phase_has_a_mark_that_fits_its_column() -> None:
    assert set(PHASE_MARKS) == set(SessionPhase)
    assert PHASE_MARKS[P.IDLE] == "", "no planned work, nothing to say"
    marks = [m for p, m in PHASE_MARKS.items() if p is not P.IDLE]
    assert all(len(m) == 4 for m in marks) and len(set(marks)) == len(marks)


async def test_a_row_shows_the_phase_then_the_state_under_the_name() -> None:
    app = _ListApp()
    async with app.run_test(size=(42, 8)) as pilot:  # the list's width on a 120-column screen
        session_list = app.query_one(SessionList)
        session_list.set_sessions(
            [
                _session("api-refactor", SessionState.SUSPENDED, P.EXECUTION),
                _session("flaky tests", SessionState.ACTIVE, P.PLANNING),
                _session("chat", SessionState.CREATED, P.IDLE),
            ]
        )
        await pilot.pause()
        lines = [session_list.render_line(n).text.rstrip() for n in range(6)]
        assert session_list.scrollable_content_region.width == 40
        assert lines == [
            "  1     api-refactor              2h ago",
            "        exec · suspended",
            "  2     flaky tests               2h ago",
            "        plan · active",
            "  3     chat                      2h ago",
            "        created",
        ]


async def test_a_narrow_list_drops_the_time_and_cuts_the_second_line() -> None:
    app = _ListApp()
    async with app.run_test(size=(20, 4)) as pilot:
        session_list = app.query_one(SessionList)
        session_list.set_sessions([_session("flaky tests", SessionState.ACTIVE, P.TESTING)])
        await pilot.pause()
        first, second = (session_list.render_line(n).text for n in range(2))
        assert "ago" not in first and first.startswith("  1     flaky")
        assert second.startswith("        test · ") and len(second) == 18


async def test_the_list_follows_a_phase_move_live(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        session = await engine.create_session("live")
        await settle(pilot)
        rows = main_screen(app).session_list

        def row_of_live() -> str:
            index = [s.id for s in rows.shown].index(session.id)
            return rows.render_line(index * 2 + 1).text  # its second line

        assert "plan" not in row_of_live()
        await engine.set_phase(session.id, P.PLANNING, "add a --verbose flag")
        await wait_for(pilot, lambda: " plan " in row_of_live(), "the row to show planning")
        shown = next(s for s in rows.sessions if s.id == session.id)
        assert shown.phase is P.PLANNING
