"""A yes/no question before something that cannot be taken back (complete, delete).

``ConfirmScreen`` is a ``ModalScreen[bool]``: ``y`` (or Enter on "Yes") dismisses it with
True; ``n``, Escape or "No" with False. "No" has the focus, so a stray Enter keeps
the session as it was.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmScreen(ModalScreen[bool]):
    """Asks ``question`` (one line) with ``detail`` below it; returns the answer."""

    # Screen CSS, not DEFAULT_CSS: the app's `Screen { background }` beats default CSS
    # and would hide the screen behind the dialog.
    CSS = """
    ConfirmScreen {
        align: center middle;
        background: $background 60%;
    }
    #confirm-dialog {
        width: 64;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        border: thick $warning;
        background: $panel;
    }
    #confirm-question { text-style: bold; color: $text; width: 1fr; }
    #confirm-detail { color: $text-muted; margin-top: 1; width: 1fr; }
    #confirm-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #confirm-buttons Button { margin-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Yes: go ahead."),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="No: leave it as it is."),
        Binding(
            "escape",
            "answer(False)",
            "Cancel",
            id="confirm.cancel",
            tooltip="Close this question; nothing changes.",
        ),
    ]

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Label(self.question, id="confirm-question", markup=False)
            if self.detail:
                yield Label(self.detail, id="confirm-detail", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="warning")
                yield Button("No (n)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, pressed: Button.Pressed) -> None:
        pressed.stop()
        self.dismiss(pressed.button.id == "confirm-yes")
