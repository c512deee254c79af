"""The composer as the user types into it: lines, pastes, history and drafts per session.

Real engine, real archive under a tmp dir, keys pressed through the Pilot.
"""

from __future__ import annotations

from textual import events

from backend.engine import Engine
from backend.messages import MessageType
from sylk_tui.app import SylkApp
from tests.tui.support import main_screen, send_line, settle, transcript_texts, wait_for
from widgets.composer.composer import BLINK_REST_SECONDS

SIZE = (120, 40)


def _sent(engine: Engine, app: SylkApp) -> list[str]:
    return [
        str(m.payload.get("text", ""))
        for m in main_screen(app).transcript.messages
        if m.type is MessageType.USER_INPUT
    ]


async def test_enter_sends_and_ctrl_j_or_shift_enter_start_a_new_line(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"first", "ctrl+j", *"second", "shift+enter", *"third")
        assert composer.value == "first\nsecond\nthird"
        assert composer.cursor_location == (2, 5)
        await pilot.press("enter")
        await settle(pilot)
        assert _sent(engine, app)[-1] == "first\nsecond\nthird"
        assert composer.value == ""


async def test_keys_typed_just_before_enter_are_sent_with_it(engine: Engine) -> None:
    # A terminal delivers "hi<enter>" in one read: the app sees every key before the
    # composer has inserted any, and enter (a priority binding) must still send them.
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        for key in ("h", "i", "ctrl+j", "y", "o", "enter"):
            character = {"ctrl+j": "\n", "enter": "\r"}.get(key, key)
            app.post_message(events.Key(key, character))
        await settle(pilot)
        await wait_for(pilot, lambda: "hi\nyo" in _sent(engine, app), "the whole line sent")
        assert composer.value == ""


async def test_enter_on_an_empty_composer_sends_nothing(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = list(transcript_texts(app))
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("space", "ctrl+j", "space", "enter")  # blank lines only
        await settle(pilot)
        assert transcript_texts(app) == before
        session = engine.active_session()
        assert session is not None
        assert not [
            m for m in await engine.transcript(session.id) if m.type is MessageType.USER_INPUT
        ]


async def test_a_paste_keeps_every_line_and_the_composer_grows_then_scrolls(
    engine: Engine,
) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        assert composer.outer_size.height == 3  # one line and its border
        composer.post_message(events.Paste("alpha\r\nbeta\ngamma"))
        await pilot.pause()
        assert composer.value == "alpha\nbeta\ngamma"
        await wait_for(pilot, lambda: composer.outer_size.height == 5, "three lines shown")
        await pilot.press("enter")
        await settle(pilot)
        assert _sent(engine, app)[-1] == "alpha\nbeta\ngamma"

        composer.post_message(events.Paste("\n".join(f"line {n}" for n in range(30))))
        await pilot.pause()
        assert composer.document.line_count == 30
        await wait_for(pilot, lambda: composer.outer_size.height == 12, "ten lines, then scroll")


async def test_up_and_down_walk_the_lines_sent_and_keep_what_was_typed(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await send_line(pilot, "/status")
        await send_line(pilot, "two\nlines")
        await pilot.press(*"dra")
        await pilot.press("up")
        assert composer.value == "two\nlines"
        assert composer.cursor_location == (1, 5)
        await pilot.press("up")  # on the second line: the cursor moves up first
        assert composer.value == "two\nlines"
        await pilot.press("up")
        assert composer.value == "/status"
        await pilot.press("up")  # the oldest: it stays
        assert composer.value == "/status"
        await pilot.press("down")  # the cursor lands at the end, on the last line
        assert composer.value == "two\nlines"
        await pilot.press("down")
        assert composer.value == "dra"


async def test_history_comes_back_after_a_restart_from_the_archive(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "remember me")
    again = SylkApp(engine)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: main_screen(again).transcript.messages, "the transcript")
        await pilot.press("up")
        assert main_screen(again).composer.value == "remember me"


async def test_each_session_keeps_its_draft_across_switches(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/session new second")
        screen = main_screen(app)
        second = screen.transcript.session_id
        await pilot.press(*"half", "ctrl+j", *"typed")
        await pilot.press("left", "left")
        await pilot.press("alt+up")
        await wait_for(pilot, lambda: screen.transcript.session_id != second, "the switch")
        assert screen.composer.value == ""
        await pilot.press(*"other")
        await pilot.press("alt+down")
        await wait_for(pilot, lambda: screen.transcript.session_id == second, "back again")
        assert screen.composer.value == "half\ntyped"
        assert screen.composer.cursor_location == (1, 3)
        await pilot.press("alt+up")
        await wait_for(pilot, lambda: screen.transcript.session_id != second, "the first")
        assert screen.composer.value == "other"


async def test_a_line_recorded_after_a_switch_clears_only_its_own_draft(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        first = screen.transcript.session_id
        assert first is not None
        screen.composer.value = "kept aside"
        screen.composer.show_session("elsewhere")
        screen.composer.value = "kept aside"
        screen.composer.accepted("kept aside", first)
        assert screen.composer.value == "kept aside"  # the other session's text stays
        assert screen.composer.draft(first) == ""


async def test_an_idle_composer_stops_blinking_and_a_key_wakes_it(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        composer._last_key -= BLINK_REST_SECONDS  # as if nothing was typed for a while
        composer._rest_cursor()
        assert not composer.blink_timer._active.is_set()  # no repaint while idle
        await pilot.press("x")
        assert composer.blink_timer._active.is_set()
        assert composer.value == "x"


async def test_a_keymap_can_make_enter_a_new_line_and_another_key_send(engine: Engine) -> None:
    app = SylkApp(engine, keymap={"composer.send": "ctrl+s", "composer.newline": "enter"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        composer = main_screen(app).composer
        await pilot.press(*"one", "enter", *"two")
        assert composer.value == "one\ntwo"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert _sent(engine, app)[-1] == "one\ntwo"
