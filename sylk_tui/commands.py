"""Command palette entries for the main screen: session actions and every session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from screens.main_screen import MainScreen

if TYPE_CHECKING:
    from sylk_tui.app import SylkApp


@dataclass(frozen=True)
class PaletteEntry:
    text: str
    help: str
    run: Callable[[], object]


class SessionCommands(Provider):
    """Offers the session actions and "Switch to session <name>" for each session."""

    def _entries(self) -> list[PaletteEntry]:
        if not isinstance(self.screen, MainScreen):
            return []
        app = cast("SylkApp", self.app)
        entries = [
            PaletteEntry(
                "New session", "Create a session and switch to it", app.action_new_session
            ),
            PaletteEntry("Next session", "Switch to the next session", app.action_next_session),
            PaletteEntry(
                "Previous session", "Switch to the previous session", app.action_previous_session
            ),
            PaletteEntry(
                "Suspend session", "Suspend the session on screen", app.action_suspend_session
            ),
            PaletteEntry(
                "Resume session",
                "Bring the session on screen to the front",
                app.action_resume_session,
            ),
            PaletteEntry(
                "Complete session",
                "Mark the session on screen as done",
                app.action_complete_session,
            ),
        ]
        for number, session in enumerate(app.sessions.values(), 1):
            entries.append(
                PaletteEntry(
                    f"Switch to session {session.name}",
                    f"#{number} · {session.state.value} · {session.short_id}",
                    partial(app.action_switch_to, session.id),
                )
            )
        return entries

    async def discover(self) -> Hits:
        for entry in self._entries():
            yield DiscoveryHit(entry.text, entry.run, help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._entries():
            score = matcher.match(entry.text)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.text), entry.run, help=entry.help)
