"""The main screen owns its keys: it posts intents and shows what the state publishes.

Here the screen runs in a bare host app, with no engine: the host records the
intents the screen posts and drives the state the screen subscribes to.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Any

from textual import on
from textual.app import App
from textual.message import Message

from backend.config.settings import load_config
from backend.engine import Engine
from backend.messages import Message as EngineMessage
from backend.messages import MessageType
from backend.sessions.models import Session, SessionState
from screens.main_screen import MainScreen
from screens.session_commands import SessionCommands
from screens.sessions.new_session import NewSessionScreen
from screens.state.intents import NewSession, SendLine, SessionAction
from screens.state.store import UiState
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, settle

SIZE = (120, 40)


def _session(n: int, state: SessionState = SessionState.SUSPENDED) -> Session:
    return Session(
        id=f"{n:02d}" + "c" * 30,
        name=f"session {n}",
        state=state,
        workspace="/w",
        created_at=FROZEN_NOW,
        last_active_at=FROZEN_NOW,
    )


class Host(App[None]):
    """Hosts the main screen with a state of its own and keeps every intent posted."""

    def __init__(self) -> None:
        super().__init__()
        self.state = UiState(self, clock=lambda: FROZEN_NOW)
        self.intents: list[Message] = []

    async def on_mount(self) -> None:
        await self.push_screen(MainScreen(self.state, clock=lambda: FROZEN_NOW, tz=UTC))

    @on(SessionAction)
    @on(NewSession)
    @on(SendLine)
    def _record(self, intent: Message) -> None:
        self.intents.append(intent)


def _kinds(host: Host) -> list[tuple[str, str | None]]:
    return [(i.kind, i.session_id) for i in host.intents if isinstance(i, SessionAction)]


async def test_the_screen_shows_what_the_state_publishes() -> None:
    host = Host()
    async with host.run_test(size=SIZE) as pilot:
        one, two = _session(1), _session(2, SessionState.ACTIVE)
        host.state.load([one, two], two.id)
        host.state.view(two.id)
        host.state.begin_read(two.id)
        line = EngineMessage[dict[str, Any]](
            id="m1",
            session_id=two.id,
            source="user",
            type=MessageType.USER_INPUT,
            payload={"text": "hello"},
            timestamp=FROZEN_NOW,
        )
        host.state.loaded(two.id, [line])
        await pilot.pause()
        screen = main_screen(host)  # type: ignore[arg-type]
        assert [s.id for s in screen.session_list.sessions] == [one.id, two.id]
        assert screen.session_list.foreground_id == two.id
        assert screen.transcript.session_id == two.id
        assert [m.id for m in screen.transcript.messages] == ["m1"]
        assert str(screen.transcript.border_title) == "2 · session 2"
        assert "Message session 2" in screen.composer.placeholder

        host.state.upsert(two.model_copy(update={"state": SessionState.COMPLETED}))
        await pilot.pause()
        assert str(screen.transcript.border_subtitle) == "completed"
        assert "read only" in screen.composer.placeholder


async def test_keys_post_intents_and_the_screen_acts_on_its_own() -> None:
    host = Host()
    async with host.run_test(size=SIZE) as pilot:
        one, two = _session(1), _session(2, SessionState.ACTIVE)
        host.state.load([one, two], two.id)
        host.state.view(two.id)
        await pilot.pause()

        await pilot.press("alt+down", "alt+up", "alt+s", "alt+r", "alt+c", "y", "alt+1")
        await pilot.pause()
        assert _kinds(host) == [
            ("next", None),  # relative to where the screen is when the app acts
            ("previous", None),
            ("suspend", None),
            ("resume", None),
            ("complete", two.id),  # confirmed for the session it asked about
            ("switch", one.id),
        ]

        # A session number out of range is answered by the screen itself.
        host.intents.clear()
        await pilot.press("alt+9")
        await pilot.pause()
        assert host.intents == []

        # The composer's line goes to the session viewed; the screen posts it.
        screen = main_screen(host)  # type: ignore[arg-type]
        screen.composer.value = "fix the flaky test"
        await pilot.press("enter")
        await pilot.pause()
        assert [(i.session_id, i.text) for i in host.intents if isinstance(i, SendLine)] == [
            (two.id, "fix the flaky test")
        ]

        # ctrl+n asks for a name in the screen's own dialog, then posts the intent.
        await pilot.press("ctrl+n")
        assert isinstance(host.screen, NewSessionScreen)
        await pilot.press(*"spike", "enter")
        await pilot.pause()
        assert [i.name for i in host.intents if isinstance(i, NewSession)] == ["spike"]


async def test_escape_asks_to_stop_and_returns_to_the_composer() -> None:
    host = Host()
    async with host.run_test(size=SIZE) as pilot:
        session = _session(1, SessionState.ACTIVE)
        host.state.load([session], session.id)
        host.state.view(session.id)
        await pilot.pause()
        screen = main_screen(host)  # type: ignore[arg-type]
        screen.session_list.focus()
        await pilot.press("escape")
        await pilot.pause()
        assert _kinds(host) == [("stop", None)]
        assert screen.composer.has_focus  # nobody was answering


def test_the_palette_offers_session_commands_on_the_main_screen_only() -> None:
    assert SessionCommands in MainScreen.COMMANDS
    assert SessionCommands not in SylkApp.COMMANDS
    assert SessionCommands not in NewSessionScreen.COMMANDS


async def test_a_user_keymap_rebinds_a_key_by_its_binding_id(engine: Engine) -> None:
    first = await engine.create_session("first")
    await engine.create_session("second")
    app = SylkApp(engine, keymap={"session.previous": "ctrl+k", "session.next": "ctrl+j"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+j")  # from the last session, next wraps to the first
        await settle(pilot)
        active = engine.active_session()
        assert active is not None and active.id == first.id
        await pilot.press("alt+down")  # the default key no longer does it
        await settle(pilot)
        active = engine.active_session()
        assert active is not None and active.id == first.id


async def test_a_keymap_id_no_binding_carries_is_named_in_a_warning(engine: Engine) -> None:
    app = SylkApp(engine, keymap={"session.nxt": "ctrl+j", "session.previous": "ctrl+k"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
    assert len(warnings) == 1
    assert "[keymap] names no binding: session.nxt (did you mean session.next?)" in warnings[0]
    assert "session.previous" not in warnings[0]  # a valid id is not named


def test_the_keymap_is_read_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[keymap]\n"session.next" = "alt+j,ctrl+pagedown"\n')
    assert load_config(path, env={}).keymap == {"session.next": "alt+j,ctrl+pagedown"}
    # A bad entry is kept as written: the TUI names it at start (tests/tui/test_keymap.py).
    path.write_text('[keymap]\n"session next" = "alt+j"\n')
    assert load_config(path, env={}).keymap == {"session next": "alt+j"}
