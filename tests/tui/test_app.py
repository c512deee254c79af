"""Pilot tests: the app on a real engine, a real archive and real key presses."""

from __future__ import annotations

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.errors import ArchiveClosedError
from backend.sessions.models import SessionState
from screens.sessions.new_session import NewSessionScreen
from sylk_tui.app import SylkApp
from tests.tui.support import (
    RecordingApp,
    main_screen,
    send_line,
    settle,
    transcript_texts,
    wait_for,
)

SIZE = (120, 40)


async def _sessions(engine: Engine, *names: str) -> list[str]:
    ids = [(await engine.create_session(name)).id for name in names]
    return ids


def _active_name(engine: Engine) -> str | None:
    active = engine.active_session()
    return active.name if active else None


async def test_startup_puts_a_session_in_front_and_on_screen(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: (
                engine.active_session() is not None
                and main_screen(app).transcript.session_id is not None
            ),
            "a session in front and on screen",
        )
        active = engine.active_session()
        assert active is not None
        screen = main_screen(app)
        assert [s.id for s in screen.session_list.sessions] == [active.id]
        assert screen.session_list.foreground_id == active.id
        assert screen.transcript.session_id == active.id
        assert screen.composer.has_focus


async def test_new_session_by_keyboard(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, NewSessionScreen)
        await pilot.press(*"alpha", "enter")
        await settle(pilot)
        assert _active_name(engine) == "alpha"
        screen = main_screen(app)
        assert screen.transcript.session_id == engine.get_session("alpha").id
        assert [s.name for s in screen.session_list.sessions][-1] == "alpha"

        # Escape cancels; an empty name lets Sylk pick one.
        await pilot.press("ctrl+n", "escape")
        await settle(pilot)
        assert len(engine.list_sessions()) == 2
        await pilot.press("ctrl+n", "enter")
        await settle(pilot)
        assert len(engine.list_sessions()) == 3
        assert _active_name(engine) not in ("alpha", None)


async def test_switch_by_keyboard(engine: Engine) -> None:
    one, two, three = await _sessions(engine, "one", "two", "three")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        transcript = main_screen(app).transcript
        assert _active_name(engine) == "three"
        presses = [
            ("alt+down", "one"),  # wraps around
            ("alt+down", "two"),
            ("alt+up", "one"),
            ("ctrl+pagedown", "two"),
            ("ctrl+pageup", "one"),
            ("alt+3", "three"),
            ("alt+2", "two"),
            # What tmux and most terminals send for alt+1 (ESC 1) reaches
            # Textual as the character macOS types for option+1.
            ("inverted_exclamation_mark", "one"),
        ]
        for key, name in presses:
            await pilot.press(key)
            await settle(pilot)
            assert _active_name(engine) == name, key
            assert transcript.session_id == engine.get_session(name).id, key
        assert main_screen(app).composer.value == ""
        states = {s.name: s.state for s in engine.list_sessions()}
        assert states == {
            "one": SessionState.ACTIVE,
            "two": SessionState.SUSPENDED,
            "three": SessionState.SUSPENDED,
        }
        assert {one, two, three} == {s.id for s in main_screen(app).session_list.sessions}


async def test_rapid_switching_ends_where_the_user_stops(engine: Engine) -> None:
    await _sessions(engine, *(f"s{n}" for n in range(1, 7)))
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+1", "alt+down", "alt+down", "alt+down", "alt+down")
        await settle(pilot)
        assert _active_name(engine) == "s5"
        screen = main_screen(app)
        assert screen.transcript.session_id == engine.get_session("s5").id
        assert screen.session_list.foreground_id == engine.get_session("s5").id


async def test_clicking_a_row_switches(engine: Engine) -> None:
    await _sessions(engine, "left", "right")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # Row 1 of the list sits under the top border of the panel.
        await pilot.click("#session-list", offset=(8, 1))
        await settle(pilot)
        assert _active_name(engine) == "left"
        await pilot.click("#session-list", offset=(8, 3))  # two lines a session
        await settle(pilot)
        assert _active_name(engine) == "right"


async def test_composer_commands(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = engine.active_session()
        assert first is not None
        composer = main_screen(app).composer

        await pilot.press(*"/session new x", "enter")  # typed key by key, once
        await settle(pilot)
        assert _active_name(engine) == "x"
        assert main_screen(app).transcript.session_id == engine.get_session("x").id
        assert composer.value == ""

        await send_line(pilot, "/session switch 1")
        assert _active_name(engine) == first.name
        texts = transcript_texts(app)
        assert "/session new x" in texts
        assert any(t.startswith("created and switched to session 'x'") for t in texts)

        # A malformed command is answered with its error; the app keeps working.
        await send_line(pilot, "/session frob")
        assert any("unknown /session verb 'frob'" in t for t in transcript_texts(app))
        assert composer.value == ""
        await send_line(pilot, "/session list")
        assert "x" in transcript_texts(app)[-1]


async def test_plain_text_is_answered_with_the_offline_notice(engine: Engine) -> None:
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "fix the flaky test")
        texts = transcript_texts(app)
        assert texts[-2] == "fix the flaky test"
        assert "No language model is configured" in texts[-1]
        assert main_screen(app).composer.value == ""


async def test_a_refused_line_stays_in_the_composer(engine: Engine) -> None:
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+s")
        await settle(pilot)
        assert engine.list_sessions()[0].state is SessionState.SUSPENDED
        # A request for the agents goes only to the session in front.
        await send_line(pilot, "fix the flaky test")
        assert main_screen(app).composer.value == "fix the flaky test"
        assert app.notices[-1][0] == "error"
        assert "is suspended, not active" in app.notices[-1][1]
        # Resume, send the same line again: now it is recorded and cleared.
        await pilot.press("alt+r", "enter")
        await settle(pilot)
        assert main_screen(app).composer.value == ""
        assert "fix the flaky test" in transcript_texts(app)


async def test_lifecycle_keys_and_refusals(engine: Engine) -> None:
    await _sessions(engine, "done-soon", "other")
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("alt+1", "alt+c", "y")  # completing asks first
        await settle(pilot)
        assert engine.get_session("done-soon").state is SessionState.COMPLETED
        # Completing it again is answered at once, with nothing to confirm.
        await pilot.press("alt+c")
        await settle(pilot)
        assert "'done-soon' is completed already" in app.notices[-1][1]
        # A completed session can be looked at but not brought to the front.
        await pilot.press("alt+2", "alt+1")
        await settle(pilot)
        assert main_screen(app).transcript.session_id == engine.get_session("done-soon").id
        assert _active_name(engine) == "other"
        await pilot.press("alt+9")
        await settle(pilot)
        assert app.notices[-1] == ("warning", "There is no session 9.")


async def test_command_palette_offers_every_session(engine: Engine) -> None:
    await _sessions(engine, "alpha", "beta")
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"alpha")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert _active_name(engine) == "alpha"
        await pilot.press("ctrl+p", *"suspe")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert engine.get_session("alpha").state is SessionState.SUSPENDED


async def test_restart_shows_the_same_sessions_and_transcript(engine_config: EngineConfig) -> None:
    first_parts = build(engine_config)
    first_engine = Engine.from_parts(first_parts)
    app = SylkApp(first_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n", *"kept", "enter")
        await settle(pilot)
        await send_line(pilot, "remember this line")
        names = [s.name for s in main_screen(app).session_list.sessions]
        before = transcript_texts(app)
        await pilot.press("ctrl+q")
    # The app closed its engine on the way out.
    assert first_engine.events.subscriber_count == 0
    with pytest.raises(ArchiveClosedError):
        first_parts.archive.save_sessions(first_engine.list_sessions())

    second_engine = Engine(engine_config)
    again = SylkApp(second_engine)
    try:
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = main_screen(again)
            assert [s.name for s in screen.session_list.sessions] == names
            assert screen.transcript.session_id == second_engine.get_session("kept").id
            assert transcript_texts(again) == before
            assert "remember this line" in before
    finally:
        await second_engine.aclose()


async def test_an_error_that_quotes_a_key_is_shown_redacted(
    engine_config: EngineConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider's error may echo the key it was sent; the toast never shows it."""
    from pydantic import SecretStr

    from backend.config.settings import ProviderSettings
    from backend.errors import SylkError
    from tests.support.engine_env import quiet_config

    key = "sk-tui-leak-0123456789abcdef"
    provider = ProviderSettings(kind="openai", api_key=SecretStr(key))
    settings = quiet_config(providers={"openai": provider})
    engine = Engine.from_parts(build(engine_config, settings))

    async def failing(session_id: str, text: str) -> object:
        raise SylkError(f"401 from the provider: invalid key {key}")

    monkeypatch.setattr(engine, "submit", failing)
    app = RecordingApp(engine)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await send_line(pilot, "hello")
            await wait_for(pilot, lambda: app.notices, "the error's toast")
            assert all(key not in message for _, message in app.notices)
            assert any("invalid key" in message for _, message in app.notices)
    finally:
        await engine.aclose()


async def test_a_machine_without_a_sandbox_is_told_up_front(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backend.sandbox import sandbox_support

    monkeypatch.setenv("SYLK_SANDBOX", "none")
    sandbox_support.cache_clear()
    app = RecordingApp(engine)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: app.notices, "the sandbox warning")
            severity, message = app.notices[-1]
            assert severity == "warning" and "No sandbox on this machine" in message
            assert "every command needs approval" in message
    finally:
        sandbox_support.cache_clear()


async def test_start_up_resumes_the_plans_that_were_running(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's resume is tested against a real restart; here: the TUI asks for it."""
    asked: list[bool] = []

    async def resume() -> list[tuple[str, str]]:
        asked.append(True)
        return []

    monkeypatch.setattr(engine, "resume_dags", resume)
    app = RecordingApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: asked, "the plans' resume")
    assert asked == [True]
