"""Closing a session from the TUI asks first, then closes it (``/session close``)."""

from __future__ import annotations

from backend.engine import Engine
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, settle, wait_for

SIZE = (120, 40)


async def test_close_asks_first_and_a_no_keeps_the_session(engine: Engine) -> None:
    kept = await engine.create_session("kept")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        screen.action_close_session()
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert engine.get_session(kept.id).closed_at is None

        screen.action_close_session()
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: engine.get_session(kept.id).closed_at is not None, "closed")
        await wait_for(pilot, lambda: kept.id not in app.state.sessions, "gone from the list")
