"""The session list: its activity markers, its filter, and the sidebar hidden by a key or
by a narrow terminal; on a real engine and archive."""

from __future__ import annotations

import asyncio

from backend.engine import Engine, EngineParts
from backend.events import ChoiceOption, ChoiceQuestion
from screens.state.pending import PendingQuestion
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, settle, wait_for
from widgets.session_list import ACTIVITY_MARKS, Activity

SIZE = (120, 40)


async def test_each_activity_marker_follows_the_session(
    engine: Engine, engine_parts: EngineParts
) -> None:
    quiet = await engine.create_session("quiet")
    busy = await engine.create_session("busy")
    front = await engine.create_session("front")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listed = main_screen(app).session_list
        assert listed.activity(quiet.id) is Activity.QUIET

        # Unread: an answer lands in a session that is not on screen.
        await engine.submit(quiet.id, "/session list")
        await wait_for(pilot, lambda: listed.activity(quiet.id) is Activity.UNREAD, "unread")
        row = [s.id for s in listed.shown].index(quiet.id)
        assert f"{ACTIVITY_MARKS[Activity.UNREAD]} quiet" in listed.render_line(row * 2).text

        # Working: an answer is being written in it.
        app.state.step(busy.id, "architect", "text_delta", "Thinking about it")
        await wait_for(pilot, lambda: listed.activity(busy.id) is Activity.WORKING, "working")

        # Waiting for you: a question of that session is pending; it outranks working.
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        question = ChoiceQuestion("Run pytest?", "allow it?", [ChoiceOption("y", "yes")])
        app.state.pending.add(PendingQuestion("q1", busy.id, question, answer, FROZEN_NOW))
        await wait_for(pilot, lambda: listed.activity(busy.id) is Activity.WAITING, "waiting")
        app.state.pending.settle("q1")
        await wait_for(pilot, lambda: listed.activity(busy.id) is Activity.WORKING, "working")

        # Done and failed follow the session's state.
        await engine.complete_session(front.id)
        await wait_for(pilot, lambda: listed.activity(front.id) is Activity.DONE, "done")
        doomed = await engine.create_session("doomed")  # in front: only that one can fail
        await engine_parts.sessions.fail_session(doomed.id, "the model went away")
        await wait_for(pilot, lambda: listed.activity(doomed.id) is Activity.FAILED, "failed")

        # Seen: showing the unread session clears its marker.
        await pilot.press("alt+1")
        await wait_for(pilot, lambda: listed.activity(quiet.id) is Activity.QUIET, "read")


async def test_the_filter_narrows_by_name_and_keeps_the_numbers(engine: Engine) -> None:
    for name in ("api-refactor", "flaky tests", "docs", "flaky ci"):
        await engine.create_session(name)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listed = main_screen(app).session_list
        await pilot.press("ctrl+f", *"FLAKY")
        await pilot.pause()
        assert listed.filter_text == "FLAKY"
        assert [s.name for s in listed.shown] == ["flaky tests", "flaky ci"]
        assert listed.render_line(2).text.startswith("  4 ")  # its number, not its row
        assert "filter: FLAKY" in str(listed.border_title)
        await pilot.press("backspace", *"Y c")
        assert [s.name for s in listed.shown] == ["flaky ci"]
        await pilot.press("enter")  # opens the row, and the filter closes
        await settle(pilot)
        assert main_screen(app).transcript.session_id == listed.shown[3].id
        assert listed.filter_text is None and len(listed.shown) == 4

        await pilot.press("ctrl+f", *"zzz")
        assert listed.shown == ()
        await pilot.press("escape")
        assert len(listed.shown) == 4 and str(listed.border_title) == "Sessions"


async def test_the_sidebar_toggles_and_hides_itself_when_narrow(engine: Engine) -> None:
    await engine.create_session("one")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listed = main_screen(app).session_list
        assert listed.display
        await pilot.press("ctrl+b")
        assert not listed.display
        await pilot.press("ctrl+b")
        assert listed.display

        await pilot.resize_terminal(99, 30)
        await wait_for(pilot, lambda: not listed.display, "hidden below 100 columns")
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: listed.display, "shown again when wide")

        await pilot.press("ctrl+b")  # hidden by hand: it stays hidden when wide
        await pilot.resize_terminal(80, 24)
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert not listed.display
        await pilot.press("ctrl+f")  # the filter brings it back
        assert listed.display and listed.has_focus


async def test_a_narrow_start_hides_the_sidebar(engine: Engine) -> None:
    await engine.create_session("one")
    app = SylkApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not main_screen(app).session_list.display
