"""Tab in the composer: `/` commands, `@agents`, session names and workspace paths.

The Pilot tests press Tab in a real app over a real engine; the path tests below them
call the completion directly against a real folder, as an untrusted repository might
lay one out (links out of the workspace, `..`, absolute paths).
"""

from __future__ import annotations

import os
from pathlib import Path

from backend.engine import Engine
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, send_line, settle, wait_for
from widgets.composer.completion import (
    CompletionSources,
    agent_names,
    command_words,
    complete,
    path_offers,
)

SIZE = (120, 40)


async def test_tab_completes_a_command_then_its_verb(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"/sess", "tab")
        assert composer.value == "/session"
        await pilot.press("space", *"sw", "tab")
        assert composer.value == "/session switch"
        assert composer.has_focus
        assert not composer.menu_open


async def test_several_offers_open_a_menu_that_arrows_move_and_enter_takes(
    engine: Engine,
) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press("@", "a", "tab")  # architect, archivalist, academic
        assert composer.menu_open
        assert composer.value == "@a"
        menu = app.screen.query_one("#completion-menu")
        assert menu.display
        await pilot.press("down")
        await pilot.press("enter")  # takes the offer; sends nothing
        assert composer.value == "@architect"
        assert not composer.menu_open
        await pilot.press("space", *"hi")
        assert composer.value == "@architect hi"


async def test_escape_closes_the_menu_and_keeps_the_text(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"/s", "tab")
        assert composer.menu_open  # /session, /status
        await pilot.press("escape")
        assert not composer.menu_open
        assert composer.value == "/s"
        assert composer.has_focus


async def test_the_menu_narrows_as_the_word_grows(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"/s", "tab")
        assert composer.menu_open
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("tab")
        assert composer.value == "/status"


async def test_tab_completes_session_names_quoting_spaces(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/session new bug hunt")
        await wait_for(pilot, lambda: len(main_screen(app).session_list.sessions) == 2, "two")
        composer = main_screen(app).composer
        await pilot.press(*"/session switch bu", "tab")
        assert composer.value == "/session switch 'bug hunt'"
        await pilot.press("enter")
        await settle(pilot)
        active = engine.active_session()
        assert active is not None and active.name == "bug hunt"


async def test_tab_completes_paths_in_the_sessions_workspace(
    engine: Engine, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("")
    (workspace / "src" / "api.py").write_text("")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"look at sr", "tab")
        assert composer.value == "look at src/"
        await pilot.press("a", "tab")
        assert composer.value == "look at src/ap"  # app.py and api.py share "ap"
        assert composer.menu_open
        await pilot.press("tab")
        assert composer.value == "look at src/api.py"


async def test_tab_with_nothing_to_complete_moves_the_focus_on(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press("tab")
        assert not composer.has_focus


# -- the completion itself -----------------------------------------------------------------
def test_the_command_table_is_the_guides() -> None:
    table = command_words()
    for command in ("/session", "/help", "/status", "/plan", "/model", "/mcp", "/undo"):
        assert command in table
    assert "switch" in table["/session"]
    assert "engineer" in table["/model"] and "refresh" in table["/mcp"]
    assert "engineer" in agent_names() and "guide" not in agent_names()


def test_only_the_first_word_of_the_first_line_is_a_command() -> None:
    sources = CompletionSources()
    assert complete("/he", first_line=True, sources=sources) is not None
    assert complete("/he", first_line=False, sources=sources) is None
    assert complete("say /he", first_line=True, sources=sources) is None


def test_paths_never_leave_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "mod.py").write_text("")
    (workspace / ".env").write_text("SECRET=1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.key").write_text("")
    os.symlink(outside, workspace / "link-out")
    os.symlink(workspace / "pkg", workspace / "link-in")

    def texts(word: str) -> list[str]:
        return [offer.text for offer in path_offers(workspace, word)]

    assert texts("pk") == ["pkg/"]
    assert texts("pkg/") == ["pkg/mod.py"]
    assert texts("link-") == ["link-in/", "link-out"]  # a link out is no folder to enter
    assert texts("link-out/") == []
    assert texts("../outside/") == []
    assert texts("pkg/../../outside/") == []
    assert texts(str(outside) + "/") == []
    assert texts("~/") == []
    assert texts("") == ["link-in/", "link-out", "pkg/"]  # hidden files only when asked
    assert texts(".e") == [".env"]


def test_names_that_could_drive_the_terminal_are_not_offered(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("")
    (tmp_path / "p\x1b[31mred").write_text("")
    (tmp_path / "p\nline").write_text("")
    assert [offer.text for offer in path_offers(tmp_path, "p")] == ["plain.txt"]


async def test_enter_after_the_cursor_moved_offers_again_and_sends_nothing(
    engine: Engine,
) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"/s", "tab")
        assert composer.menu_open
        await pilot.press("left")
        await pilot.press("enter")
        await settle(pilot)
        assert composer.value == "/s"
        assert all(m.payload.get("text") != "/s" for m in main_screen(app).transcript.messages)


async def test_narrowing_keeps_the_highlighted_offer(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press("@", "a", "tab", "down", "down")  # academic, architect, archivalist
        await pilot.press("r")  # architect and archivalist are left
        await pilot.press("enter")
        assert composer.value == "@archivalist"
