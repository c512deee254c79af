"""The main screen's command palette entries: every action and every session.

Declared on the screen (``MainScreen.COMMANDS``), so the palette offers them only
there. The actions come from one table (``screens.palette_actions``); here each row
becomes an entry, with "Switch to session NAME" for each session and the session's
approval and network settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from screens.local_commands import unknown_command
from screens.palette_actions import PALETTE_ACTIONS, PaletteAction
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


def _runnable(screen: MainScreen, row: PaletteAction) -> bool:
    """Whether something carries the row out: its command is in a table, its action exists."""
    if row.command:
        return unknown_command(row.command) is None
    target: object = screen.app if row.action.startswith("app.") else screen
    name = row.action.removeprefix("app.").removeprefix("screen.").split("(", 1)[0]
    return callable(getattr(target, f"action_{name}", None))


def _runner(screen: MainScreen, row: PaletteAction) -> Callable[[], object]:
    if row.command:
        return partial(_send, screen, row.command)
    return partial(screen.call_later, screen.run_action, row.action)


def palette_entries(screen: MainScreen) -> list[PaletteEntry]:
    entries = [
        PaletteEntry(row.title, row.help, _runner(screen, row))
        for row in PALETTE_ACTIONS
        if _runnable(screen, row)
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
