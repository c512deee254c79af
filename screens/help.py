"""The help screen: every key and every ``/`` command, generated so it cannot drift.

Keys come from the ``BINDINGS`` of the app, of every screen in ``screens/`` and of the
widgets on screen, with the user's ``[keys]`` applied; commands come from the Guide's
command table and the TUI's own (``screens.local_commands``). Nothing here is written
by hand, so a new binding or command shows up without touching this file.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.events import Resize
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from screens.local_commands import LOCAL_COMMANDS


@dataclass(frozen=True)
class KeyRow:
    keys: str
    what: str
    binding_id: str


@dataclass(frozen=True)
class CommandRow:
    usage: str
    what: str


def screen_classes() -> list[type[Screen[Any]]]:
    """Every screen class of ``screens/`` (its modules imported now, not at start-up)."""
    import screens

    for module in pkgutil.walk_packages(screens.__path__, "screens."):  # screens.sessions too
        importlib.import_module(module.name)
    found: list[type[Screen[Any]]] = []
    pending: list[type[Screen[Any]]] = [Screen]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__module__.startswith("screens.") and sub not in found:
                found.append(sub)
    return sorted(found, key=lambda cls: (cls.__module__ != "screens.main_screen", cls.__name__))


def _title(cls: type[DOMNode]) -> str:
    if issubclass(cls, App):
        return "Everywhere"
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()
    return words[0].upper() + words[1:]


def key_rows(cls: type[DOMNode], keymap: Mapping[str, str], app: App[Any]) -> list[KeyRow]:
    """The bindings ``cls`` declares itself (not its bases'), keys as the user has them."""
    rows = []
    for binding in vars(cls).get("BINDINGS", []):
        if not isinstance(binding, Binding) or not binding.id:
            continue
        chosen = keymap.get(binding.id)
        if chosen is None and binding.key_display:
            keys = binding.key_display
        else:
            spelled = (chosen or binding.key).split(",")
            keys = " ".join(app.get_key_display(Binding(key.strip(), "")) for key in spelled)
        rows.append(KeyRow(keys, binding.tooltip or binding.description, binding.id))
    return rows


def key_sections(
    classes: Iterable[type[DOMNode]], keymap: Mapping[str, str], app: App[Any]
) -> list[tuple[str, list[KeyRow]]]:
    sections: list[tuple[str, list[KeyRow]]] = []
    seen: set[type[DOMNode]] = set()
    for cls in classes:
        for klass in cls.__mro__:
            if klass in seen or not issubclass(klass, DOMNode):
                continue
            seen.add(klass)
            rows = key_rows(klass, keymap, app)
            if rows:
                sections.append((_title(klass), rows))
    return sections


def command_rows() -> list[CommandRow]:
    from backend.guide.routing.command_table import COMMANDS

    rows = [CommandRow(c.usage, c.summary) for c in LOCAL_COMMANDS]
    for command in COMMANDS:
        also = f" (also {', '.join(command.aliases)})" if command.aliases else ""
        rows.append(CommandRow(command.usage, command.summary + also))
    return rows


WIDE_COLUMNS = 110
"""Terminal width from which a binding's id has its own column; below, it follows the
description, dimmed, so the description keeps most of an 80-column screen."""
KEY_COLUMN_MAX = 22
"""The key column is as wide as the widest keys shown, up to this (longer ones wrap)."""


def _matches(query: str, *fields: str) -> bool:
    return not query or any(query in field.lower() for field in fields)


class HelpScreen(ModalScreen[None]):
    """Every key (its id is what ``[keys]`` rebinds) and every command; typing filters."""

    CSS_PATH = Path(__file__).with_name("help.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="help.close", tooltip="Close the help screen."),
        Binding(
            "f1", "close", "Close", show=False, id="help.close-f1", tooltip="Close the help screen."
        ),
    ]

    def __init__(self, classes: Iterable[type[DOMNode]], keymap: Mapping[str, str]) -> None:
        super().__init__()
        self._binding_owners = list(classes)
        self._keymap = dict(keymap)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-frame"):
            yield Input(placeholder="Filter keys and commands…", id="help-filter")
            with VerticalScroll(id="help-body"):
                yield Static(id="help-keys")
                yield Static(id="help-commands")

    def on_mount(self) -> None:
        self.query_one("#help-frame").border_title = "Help · Esc closes"
        owners = [*self._binding_owners, *screen_classes()]
        self._sections = key_sections(owners, self._keymap, self.app)
        self._commands = command_rows()
        self._query = ""
        self._show(self._query)
        self.query_one("#help-filter", Input).focus()

    @on(Input.Changed, "#help-filter")
    def _filtered(self, changed: Input.Changed) -> None:
        self._query = changed.value.strip().lower()
        self._show(self._query)

    def on_resize(self, _resized: Resize) -> None:
        if hasattr(self, "_query"):  # drawn once already: the id's place may change
            self._show(self._query)

    def _show(self, query: str) -> None:
        self.listing: list[str] = []
        """What is on the help screen now, one plain line a row (tests read it)."""
        sections = [
            (title, [r for r in rows if _matches(query, r.keys, r.what, r.binding_id, title)])
            for title, rows in self._sections
        ]
        sections = [(title, rows) for title, rows in sections if rows]
        wide = self.app.size.width >= WIDE_COLUMNS
        widest = max((len(row.keys) for _, rows in sections for row in rows), default=1)
        parts: list[RenderableType] = []
        for title, rows in sections:
            parts.append(Text(title, style="bold underline"))
            keys = Table(box=None, expand=True, show_header=False, padding=(0, 1))
            keys.add_column("keys", style="bold", width=min(widest, KEY_COLUMN_MAX))
            keys.add_column("what", ratio=1)
            if wide:
                keys.add_column("id", style="dim", no_wrap=True)
            for row in rows:
                if wide:
                    keys.add_row(Text(row.keys), Text(row.what), Text(row.binding_id))
                else:
                    what = Text.assemble(row.what, "  ", (row.binding_id, "dim"))
                    keys.add_row(Text(row.keys), what)
                self.listing.append(f"{row.keys}  {row.what}  {row.binding_id}")
            parts.append(keys)
        commands = Table(box=None, expand=True, show_header=False, padding=(0, 1))
        commands.add_column("usage", style="bold", ratio=2, overflow="fold")
        commands.add_column("what", ratio=3)
        commands.add_row(Text("/ commands", style="bold underline"))
        for command in self._commands:
            if _matches(query, command.usage, command.what):
                commands.add_row(Text(command.usage, overflow="fold"), Text(command.what))
                self.listing.append(f"{command.usage}  {command.what}")
        self.query_one("#help-keys", Static).update(Group(*parts))
        self.query_one("#help-commands", Static).update(commands)

    def action_close(self) -> None:
        self.dismiss(None)
