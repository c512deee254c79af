"""Every action the command palette offers, in one table.

A row is a title, one line of help and either a Textual action run from the main
screen (``new_session``, ``app.help``) or a ``/`` command sent to the session on
screen as if typed (``/status``). Adding an action to the palette is adding a row
here; the palette leaves out a row whose action nothing carries out yet (or whose
command no table lists), so a row never runs into nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from themes import THEMES


@dataclass(frozen=True)
class PaletteAction:
    title: str
    help: str
    action: str = ""
    """A Textual action string, run with the main screen as its default namespace."""
    command: str = ""
    """Or a ``/`` command line, sent to the session on screen."""


def _send(title: str, help_text: str, command: str) -> PaletteAction:
    return PaletteAction(title, f"{help_text} ({command})", command=command)


PALETTE_ACTIONS: tuple[PaletteAction, ...] = (
    PaletteAction("New session", "Create a session and switch to it", "new_session"),
    PaletteAction("Next session", "Switch to the next session", "next_session"),
    PaletteAction("Previous session", "Switch to the previous session", "previous_session"),
    PaletteAction("Suspend session", "Suspend the session on screen", "suspend_session"),
    PaletteAction("Resume session", "Bring the session on screen to the front", "resume_session"),
    PaletteAction("Complete session", "Mark the session on screen as done", "complete_session"),
    PaletteAction("Rename session", "Give the session on screen a new name", "rename_session"),
    PaletteAction("Close session", "Close the session on screen (asks first)", "close_session"),
    PaletteAction("Delete session", "Delete the session on screen (asks first)", "delete_session"),
    PaletteAction("Toggle the session list", "Hide or show the sidebar", "toggle_sidebar"),
    PaletteAction("Filter sessions", "Narrow the session list by name", "filter_sessions"),
    PaletteAction("Approvals inbox", "Everything waiting on you, every session", "open_inbox"),
    PaletteAction("DAG view", "The plan of the session on screen, live", "dag_view"),
    _send("Team sessions", "Teammates' open sessions on a shared archive", "/team"),
    _send("Status", "Routing, models, tokens and health", "/status"),
    _send("Export as Markdown", "The session on screen", "/export md"),
    _send("Export as JSON", "Re-importable", "/export json"),
    _send("Export as HTML", "One self-contained page", "/export html"),
    _send("Export as SVG", "A screenshot of the screen", "/export svg"),
    _send("Undo the last agent turn", "Put back the files the last turn changed", "/undo"),
    _send("Show the session's changes", "The workspace against the session's start", "/diff"),
    _send(
        "Models in this session",
        "Each agent's provider/model; change with /model [ROLE] PROVIDER/MODEL",
        "/model",
    ),
    PaletteAction("Help: keys and commands", "Every key and / command (F1)", "app.help"),
    PaletteAction("Theme: next", "Switch between the dark and the light theme", "app.next_theme"),
    *(
        PaletteAction(f"Theme: {name}", "Use this theme from now on", f"app.theme({name!r})")
        for name in (theme.name for theme in THEMES)
    ),
)
