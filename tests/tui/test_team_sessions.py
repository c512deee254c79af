"""Teammates' sessions on a shared archive, live in the TUI: a second engine acting for
bob makes a session and ``/team`` and the indicator show it (owner, name, state) without
a restart; nothing of its content is shown, and nothing there opens it."""

from __future__ import annotations

import socket

from backend.engine import Engine
from screens.local_commands import LOCAL_COMMANDS
from screens.palette_actions import PALETTE_ACTIONS
from screens.team_sessions import TeamScreen
from tests.integration.team_archive.teammates import said, teammate
from tests.tui.support import RecordingApp, main_screen, send_line, settle, wait_for
from widgets.team_indicator import TeamIndicator

SIZE = (120, 40)
HOST = socket.gethostname()
SECRET = "bobsprivateplan"


async def test_a_teammates_session_appears_in_team_and_the_indicator_live(
    engine: Engine,
) -> None:
    mine = await engine.create_session("mine", isolation=False)
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        indicator = main_screen(app).query_one(TeamIndicator)
        assert indicator.text == "" and not indicator.display  # nobody else works here
        await send_line(pilot, "/team")
        await wait_for(pilot, lambda: isinstance(app.screen, TeamScreen), "the team list")
        team = app.screen
        assert isinstance(team, TeamScreen) and team.shown == []

        bob = teammate(engine.archive.path.parent, engine.workspace, "bob")
        try:
            theirs = await bob.create_session("bob refactor", isolation=False)
            bob.archive.append_messages([said(theirs.id, f"the {SECRET} for payments")])
        finally:
            await bob.aclose()

        await wait_for(pilot, lambda: team.shown, "bob's session in /team")
        assert [row[:3] for row in team.shown] == [(f"bob@{HOST}", "bob refactor", "active")]
        await pilot.press("enter")  # a teammate's session never opens from here
        await settle(pilot)
        assert app.screen is team and app.state.viewed_id == mine.id
        assert SECRET not in app.export_screenshot()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TeamScreen), "the list closed")
        assert indicator.display
        assert indicator.text == "team: bob 1 · 1 active · /team lists them"
        assert SECRET not in app.export_screenshot()


def test_team_is_a_command_the_help_and_the_palette_offer() -> None:
    assert "/team" in {c.name for c in LOCAL_COMMANDS}
    assert "/team" in {a.command for a in PALETTE_ACTIONS}
