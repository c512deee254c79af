"""The "rename session" dialog: the current name to edit, returned with ``dismiss``.

It returns the new name (stripped) or ``None`` when cancelled or unchanged; the
engine decides whether the name may be used and says why not (a notification).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

NAME_MAX = 120  # as the engine allows (backend.sessions.naming)


class RenameSessionScreen(ModalScreen[str | None]):
    # Screen CSS, not DEFAULT_CSS: the app's `Screen { background }` beats default CSS
    # and would hide the screen behind the dialog.
    CSS = """
    RenameSessionScreen {
        align: center middle;
        background: $background 60%;
    }
    #rename-dialog {
        width: 60;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        border: thick $primary;
        background: $panel;
    }
    #rename-title { text-style: bold; color: $text; margin-bottom: 1; }
    #rename-help { color: $text-muted; margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="rename-session.cancel",
            tooltip="Close this dialog; the name stays as it was.",
        ),
    ]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-dialog"):
            yield Label(f"Rename {self.current!r}", id="rename-title", markup=False)
            yield Input(value=self.current, max_length=NAME_MAX, id="rename-name")
            yield Label("Enter renames it · Escape cancels", id="rename-help")

    @on(Input.Submitted, "#rename-name")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        self.dismiss(name if name and name != self.current else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
