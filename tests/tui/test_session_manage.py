"""Delete, complete and rename from the keyboard, each through its dialog, on a real
engine and archive: a "no" keeps everything, a "yes" is carried out."""

from __future__ import annotations

import pytest

from backend.engine import Engine
from backend.errors import SessionNotFoundError
from backend.sessions.models import SessionState
from screens.sessions.confirm import ConfirmScreen
from screens.sessions.rename_session import RenameSessionScreen
from sylk_tui.app import SylkApp
from tests.tui.support import RecordingApp, main_screen, settle, wait_for

SIZE = (120, 40)


async def _two(engine: Engine) -> tuple[str, str]:
    keep = await engine.create_session("keep")
    await engine.submit(keep.id, "a line to keep")
    gone = await engine.create_session("gone")
    await engine.submit(gone.id, "a line to lose")
    return keep.id, gone.id


@pytest.mark.parametrize("refusal", ["n", "escape"])
async def test_delete_asks_and_a_no_keeps_the_session(engine: Engine, refusal: str) -> None:
    _keep, gone = await _two(engine)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+2", "alt+d")
        await pilot.pause()
        question = app.screen
        assert isinstance(question, ConfirmScreen)
        assert question.question == "Delete 'gone'?"
        await pilot.press(refusal)
        await settle(pilot)
        assert engine.get_session(gone).name == "gone"
        assert len(await engine.transcript(gone)) == 2
        assert [s.name for s in main_screen(app).session_list.sessions] == ["keep", "gone"]


async def test_delete_confirmed_removes_it_from_the_archive_and_shows_another(
    engine: Engine,
) -> None:
    keep, gone = await _two(engine)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+2", "alt+d", "y")
        await settle(pilot)
        screen = main_screen(app)
        await wait_for(pilot, lambda: len(screen.session_list.sessions) == 1, "the row to go")
        with pytest.raises(SessionNotFoundError):
            engine.get_session(gone)
        assert [s.id for s in engine.list_sessions(include_closed=True)] == [keep]
        await wait_for(pilot, lambda: screen.transcript.session_id == keep, "keep on screen")


async def test_delete_acts_on_the_row_under_the_list_cursor(engine: Engine) -> None:
    _keep, gone = await _two(engine)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        assert screen.transcript.session_id == gone  # the newest is in front
        screen.session_list.focus()
        await pilot.press("home", "alt+d")
        await pilot.pause()
        question = app.screen
        assert isinstance(question, ConfirmScreen) and question.question == "Delete 'keep'?"
        await pilot.press("y")
        await settle(pilot)
        assert [s.id for s in engine.list_sessions(include_closed=True)] == [gone]


async def test_complete_asks_first(engine: Engine) -> None:
    session = await engine.create_session("almost")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+c")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert engine.get_session(session.id).state is SessionState.ACTIVE
        await pilot.press("alt+c")
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await settle(pilot)
        assert engine.get_session(session.id).state is SessionState.COMPLETED


async def test_a_stray_enter_on_the_question_says_no(engine: Engine) -> None:
    session = await engine.create_session("almost")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+c", "enter")  # "No" has the focus
        await settle(pilot)
        assert engine.get_session(session.id).state is SessionState.ACTIVE


async def test_rename_from_the_keyboard_and_a_bad_name_is_refused(engine: Engine) -> None:
    await engine.create_session("other")
    session = await engine.create_session("draft")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+e")
        await pilot.pause()
        assert isinstance(app.screen, RenameSessionScreen)
        await pilot.press(*"retry", "enter")  # the old name is selected: typing replaces it
        await settle(pilot)
        assert engine.get_session(session.id).name == "retry"
        listed = main_screen(app).session_list
        await wait_for(pilot, lambda: listed.sessions[-1].name == "retry", "the row renamed")
        assert "retry" in str(main_screen(app).transcript.border_title)

        await pilot.press("alt+e", *"OTHER", "enter")
        await settle(pilot)
        assert engine.get_session(session.id).name == "retry"
        assert app.notices[-1][0] == "error"
        assert "already called 'OTHER'" in app.notices[-1][1]

        await pilot.press("alt+e", "escape")
        await settle(pilot)
        assert engine.get_session(session.id).name == "retry"
