"""The main screen's command palette entries: its session actions and every session.

Declared on the screen (``MainScreen.COMMANDS``), so the palette offers them only
there; each entry runs one of the screen's own actions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from screens.state.intents import SendLine

if TYPE_CHECKING:
    from screens.main_screen import MainScreen


@dataclass(frozen=True)
class PaletteEntry:
    text: str
    help: str
    run: Callable[[], object]


def _send(screen: MainScreen, line: str) -> None:
    """Send a command to the session on screen, as if typed in the composer."""
    viewed = screen.state.viewed_id
    if viewed is not None:
        screen.post_message(SendLine(viewed, line))


def palette_entries(screen: MainScreen) -> list[PaletteEntry]:
    entries = [
        PaletteEntry("New session", "Create a session and switch to it", screen.action_new_session),
        PaletteEntry("Next session", "Switch to the next session", screen.action_next_session),
        PaletteEntry(
            "Previous session", "Switch to the previous session", screen.action_previous_session
        ),
        PaletteEntry(
            "Suspend session", "Suspend the session on screen", screen.action_suspend_session
        ),
        PaletteEntry(
            "Resume session",
            "Bring the session on screen to the front",
            screen.action_resume_session,
        ),
        PaletteEntry(
            "Complete session",
            "Mark the session on screen as done",
            screen.action_complete_session,
        ),
        PaletteEntry(
            "Undo the last agent turn",
            "Put back the files the last agent turn changed (/undo)",
            partial(_send, screen, "/undo"),
        ),
        PaletteEntry(
            "Show the session's changes",
            "The workspace now against the session's start (/diff)",
            partial(_send, screen, "/diff"),
        ),
        PaletteEntry(
            "Models in this session",
            "Each agent's provider/model; change with /model [ROLE] PROVIDER/MODEL (/model)",
            partial(_send, screen, "/model"),
        ),
    ]
    entries += _approval_entries(screen)
    for number, session in enumerate(screen.state.sessions.values(), 1):
        entries.append(
            PaletteEntry(
                f"Switch to session {session.name}",
                f"#{number} · {session.state.value} · {session.short_id}",
                partial(screen.switch_to, session.id),
            )
        )
    return entries


# What each approval mode lets agents do without asking (the policy: backend.approvals).
APPROVAL_MODES = {
    "read-only": "Edits and commands are refused",
    "ask": "Edits and commands ask first",
    "auto-edit": "Edits go ahead, commands ask",
    "auto": "Edits and sandboxed commands go ahead",
}


def _approval_entries(screen: MainScreen) -> list[PaletteEntry]:
    """The session's approval mode and network switch, sent as /approval and /network."""
    entries = [
        PaletteEntry(f"Approval mode: {mode}", f"{meaning} (/approval {mode})",
                     partial(_send, screen, f"/approval {mode}"))
        for mode, meaning in APPROVAL_MODES.items()
    ]  # fmt: skip
    for state, meaning in (("on", "may"), ("off", "may not")):
        entries.append(
            PaletteEntry(
                f"Network for commands: {state}",
                f"This session's commands {meaning} reach the network (/network {state})",
                partial(_send, screen, f"/network {state}"),
            )
        )
    return entries


class SessionCommands(Provider):
    """Offers the session actions and "Switch to session <name>" for each session."""

    def _entries(self) -> list[PaletteEntry]:
        # Only the main screen declares this provider, so it is the screen it serves.
        return palette_entries(cast("MainScreen", self.screen))

    async def discover(self) -> Hits:
        for entry in self._entries():
            yield DiscoveryHit(entry.text, entry.run, help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._entries():
            score = matcher.match(entry.text)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.text), entry.run, help=entry.help)
