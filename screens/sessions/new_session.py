"""The "new session" dialog: asks for a name, returns it with ``dismiss``."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class NewSessionScreen(ModalScreen[str | None]):
    """Returns the name typed (``""``: let Sylk pick one), or ``None`` if cancelled."""

    CSS_PATH = Path(__file__).with_name("new_session.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="new-session.cancel",
            tooltip="Close this dialog without creating a session.",
        ),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="new-session-dialog"):
            yield Label("New session", id="new-session-title")
            yield Input(placeholder="name (empty: pick one for me)", id="new-session-name")
            yield Label("Enter creates and switches to it · Escape cancels", id="new-session-help")

    @on(Input.Submitted, "#new-session-name")
    def _confirm(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
