"""A question from the engine with a few options (e.g. which linter to use), or one
the user answers in words (the Architect's clarification with no options offered).

Returns the chosen option's value (or the typed answer) with ``dismiss``, or ``None``
on Escape.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label
from textual.widgets.option_list import Option

from backend.questions import ChoiceQuestion
from widgets.option_list import OptionList


class ChoiceScreen(ModalScreen[str | None]):
    CSS_PATH = Path(__file__).with_name("choice.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "Decide later",
            id="choice.cancel",
            tooltip="Close unanswered; the question waits in the inbox (F2).",
        ),
    ]

    def __init__(self, question: ChoiceQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        options = []
        for choice in self.question.options:
            label = Text(choice.label, style="bold")
            if choice.recommended:
                label.append("  (recommended)", style="italic")
            if choice.detail:
                label.append(f"\n  {choice.detail}", style="dim")
            options.append(Option(label, id=choice.value))
        with Vertical(id="choice-dialog"):
            yield Label(self.question.title, id="choice-title")
            yield Label(self.question.prompt, id="choice-prompt")
            if self.question.free_text and not options:  # the user types the answer
                yield Input(placeholder="your answer", id="choice-answer")
                yield Label("Enter answers · Escape decides later", id="choice-help")
                return
            yield OptionList(*options, id="choice-options")
            yield Label("Enter chooses (kept for every session) · Escape decides later",
                        id="choice-help")  # fmt: skip

    def on_mount(self) -> None:
        self.query_one("#choice-answer, #choice-options").focus()

    @on(Input.Submitted, "#choice-answer")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value.strip())

    @on(OptionList.OptionSelected, "#choice-options")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
