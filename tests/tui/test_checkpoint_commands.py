"""The command palette's undo and diff entries send /undo and /diff to the session on screen."""

from __future__ import annotations

from datetime import UTC

from textual import on
from textual.app import App

from backend.sessions.models import Session, SessionState
from screens.main_screen import MainScreen
from screens.session_commands import palette_entries
from screens.state.intents import SendLine
from screens.state.store import UiState
from tests.tui.support import FROZEN_NOW, main_screen


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.state = UiState(self, clock=lambda: FROZEN_NOW)
        self.sent: list[tuple[str, str]] = []

    async def on_mount(self) -> None:
        await self.push_screen(MainScreen(self.state, clock=lambda: FROZEN_NOW, tz=UTC))

    @on(SendLine)
    def _record(self, line: SendLine) -> None:
        self.sent.append((line.session_id, line.text))


async def test_undo_and_diff_from_the_palette() -> None:
    host = Host()
    async with host.run_test(size=(120, 40)) as pilot:
        session = Session(
            id="ab" * 16, name="work", state=SessionState.ACTIVE, workspace="/w",
            created_at=FROZEN_NOW, last_active_at=FROZEN_NOW,
        )  # fmt: skip
        host.state.load([session], session.id)
        host.state.view(session.id)
        await pilot.pause()
        entries = {e.text: e for e in palette_entries(main_screen(host))}  # type: ignore[arg-type]
        entries["Undo the last agent turn"].run()
        entries["Show the session's changes"].run()
        await pilot.pause()
    assert host.sent == [(session.id, "/undo"), (session.id, "/diff")]
