"""The ``/`` commands the TUI answers itself, in one table, and "did you mean" for a typo.

The Guide's own commands are in ``backend.guide.routing.command_table``; these few act on
the screen (a help screen, a theme), so the app carries them out without the engine. The
help screen and the composer's completion read both tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.errors import SylkError


@dataclass(frozen=True)
class LocalCommand:
    name: str
    usage: str
    summary: str
    action: str
    """An app action (``app.NAME``), called with the rest of the line as one string."""
    bare_only: bool = False
    """Only without arguments: with them the line goes to the Guide (``/help TOPIC``)."""


LOCAL_COMMANDS: tuple[LocalCommand, ...] = (
    LocalCommand(
        "/help", "/help", "every key and command, on one screen (F1)", "app.help", bare_only=True
    ),
    LocalCommand(
        "/theme", "/theme [NAME]", "switch theme (without a name: the next one)", "app.theme"
    ),
    LocalCommand(
        "/export",
        "/export md|json|html|svg [FILE]",
        "the session on screen as a file (json re-imports; svg is the screen)",
        "app.export_session",
    ),
    LocalCommand(
        "/team",
        "/team",
        "teammates' open sessions on a shared archive: owner, name, state (never content)",
        "app.team",
    ),
)


def _split(text: str) -> tuple[str, str]:
    words = text.strip().split(maxsplit=1)
    head = words[0].lower() if words else ""
    return head, words[1].strip() if len(words) > 1 else ""


def local_action(text: str) -> str | None:
    """The app action a line typed in the composer stands for, if the TUI answers it."""
    head, rest = _split(text)
    for command in LOCAL_COMMANDS:
        if head == command.name and not (command.bare_only and rest):
            return f"{command.action}({rest!r})"
    return None


def command_words() -> frozenset[str]:
    """Every spelling of every ``/`` command, the Guide's and the TUI's."""
    from backend.guide.routing.command_table import COMMAND_WORDS  # read when first typed

    return COMMAND_WORDS | {command.name for command in LOCAL_COMMANDS}


def unknown_command(text: str) -> SylkError | None:
    """A ``/`` line no table knows, as the error to show ("did you mean /status?")."""
    head, _rest = _split(text)
    if not head.startswith("/") or head in command_words():
        return None
    from backend.guide.routing.command_table import unknown_command as unknown

    return unknown(text.strip().split()[0], command_words())
