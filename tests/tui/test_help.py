"""The help screen lists every binding and every / command, read from where they are declared."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from textual import events
from textual.dom import DOMNode
from textual.widgets import Input, Static

from backend.engine import Engine
from backend.guide.routing.command_table import COMMANDS
from screens.help import HelpScreen, screen_classes
from screens.local_commands import LOCAL_COMMANDS
from sylk_tui.app import SylkApp
from sylk_tui.keymap import binding_ids
from tests.tui.support import RecordingApp, main_screen, send_line, settle

SIZE = (120, 40)


def _help(app: SylkApp) -> HelpScreen:
    assert isinstance(app.screen, HelpScreen), app.screen
    return app.screen


async def test_f1_lists_every_binding_id_and_every_command_of_the_tables(engine: Engine) -> None:
    await engine.create_session("first")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        owners: list[type[DOMNode]] = [type(app), *screen_classes()]
        owners += [type(node) for node in main_screen(app).walk_children(with_self=True)]
        ids = binding_ids(owners)
        await pilot.press("f1")
        await pilot.pause()
        listing = "\n".join(_help(app).listing)
        # Generated: nothing below is named by hand.
        assert len(ids) > 20
        assert [i for i in sorted(ids) if i not in listing] == []
        assert [c.usage for c in COMMANDS if c.usage not in listing] == []
        assert [c.usage for c in LOCAL_COMMANDS if c.usage not in listing] == []
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_typing_filters_the_help_screen(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        await pilot.press(*"theme")
        await pilot.pause()
        listing = _help(app).listing
        assert listing and all("theme" in row.lower() for row in listing)
        assert any("/theme" in row for row in listing)


async def test_question_mark_opens_help_only_in_an_empty_composer(engine: Engine) -> None:
    await engine.create_session("first")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        composer.focus()
        await pilot.press("a", "question_mark")
        await pilot.pause()
        assert composer.text == "a?"  # typed, not the help screen
        composer.text = ""
        await pilot.press("question_mark")
        await pilot.pause()
        _help(app)


async def test_a_question_mark_typed_in_one_burst_with_its_line_is_typed(engine: Engine) -> None:
    """Keys that arrive in one read ("is it?" from a paste without bracketed paste, or
    tmux send-keys) are queued before the composer has them: the ? is still typed."""
    await engine.create_session("first")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        composer.focus()
        await pilot.pause()
        for key, character in [("i", "i"), ("s", "s"), ("question_mark", "?")]:
            app.post_message(events.Key(key, character))  # all queued before any runs
        await pilot.pause()
        await pilot.pause()
        assert composer.text == "is?"
        assert not isinstance(app.screen, HelpScreen)


async def test_slash_help_opens_the_screen_and_help_topic_asks_the_guide(engine: Engine) -> None:
    await engine.create_session("first")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/help")
        await pilot.pause()
        _help(app)
        await pilot.press("escape")
        await pilot.pause()
        assert main_screen(app).composer.text == ""  # the line was taken
        await send_line(pilot, "/help session")
        assert not isinstance(app.screen, HelpScreen)
        texts = [str(m.payload.get("text", "")) for m in main_screen(app).transcript.messages]
        assert any("/session new" in text for text in texts)


async def test_a_mistyped_command_is_answered_with_did_you_mean(engine: Engine) -> None:
    await engine.create_session("first")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/stauts")
        errors = [text for severity, text in app.notices if severity == "error"]
        assert errors == ["unknown command /stauts; did you mean /status? (see /help)"]
        assert main_screen(app).composer.text == "/stauts"  # kept, to fix the typo
        await send_line(pilot, "/them sylk-light")  # the TUI's own commands are guessed too
        assert "did you mean /theme?" in app.notices[-1][1]


async def test_at_80_columns_descriptions_have_room_and_every_id_is_still_found(
    engine: Engine,
) -> None:
    await engine.create_session("first")
    app = SylkApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        owners: list[type[DOMNode]] = [type(app), *screen_classes()]
        owners += [type(node) for node in main_screen(app).walk_children(with_self=True)]
        await pilot.press("f1")
        await pilot.pause()
        help_screen = _help(app)
        keys = help_screen.query_one("#help-keys", Static)
        body_width = keys.content_size.width
        assert isinstance(keys.content, Group)
        tables = [part for part in keys.content.renderables if isinstance(part, Table)]
        key_width = max(table.columns[0].width or 0 for table in tables)
        # Two columns (the id follows the description, dimmed); the keys take what they need.
        assert {len(table.columns) for table in tables} == {2}
        assert body_width - key_width - 3 >= 30  # 3: the cells' padding
        for binding_id in sorted(binding_ids(owners)):
            help_screen.query_one("#help-filter", Input).value = binding_id
            await pilot.pause()
            assert any(row.endswith(binding_id) for row in help_screen.listing), binding_id
