"""A reached budget's question: continue with twice or four times the limit, a new
limit the user types, or stop.

Why a dialog of its own: the generic choice dialog offers typing only when there are
no options, and the user's own limit is often the one they want. The typed limit is
read by the engine's own check (:meth:`~backend.budgets.question.BudgetQuestion.check_limit`:
``2000``, ``2k``, ``1.5M`` tokens, ``$3.50``; above what was used), so a limit the
engine would refuse never leaves the dialog: the reason shows under the entry and the
dialog stays open. Dismisses with the answer (``continue:N`` or ``stop``), or None on
Escape ("decide later": the question keeps waiting in the inbox, F2).
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

from backend.budgets.budget_dsl import BudgetUsageError
from backend.budgets.question import BudgetQuestion
from backend.budgets.report import amount
from widgets.option_list import OptionList

NEW_LIMIT = "budget.new-limit"  # the option that opens the entry
_EXAMPLES = {"tokens": "2000, 2k or 1.5M tokens", "cost": "dollars, e.g. $3.50"}


class BudgetQuestionScreen(ModalScreen[str | None]):
    CSS_PATH = Path(__file__).with_name("budget_question.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "Decide later",
            id="budget.cancel",
            tooltip="Close unanswered; the work stays paused and the question waits in F2.",
        ),
    ]

    def __init__(self, question: BudgetQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        question = self.question
        options = [_option(c.value, c.label, c.detail, c.recommended) for c in question.options]
        used = amount(question.measure, question.used)
        options.insert(-1, _option(NEW_LIMIT, "New limit…", f"type one above the {used} used"))
        with Vertical(id="budget-dialog"):
            yield Label(question.title, id="budget-title")
            yield Label(question.prompt, id="budget-prompt")
            yield OptionList(*options, id="budget-options")
            yield Input(
                placeholder=f"new {question.limit_label} limit: {_EXAMPLES[question.measure]}",
                id="budget-limit",
            )
            yield Label("", id="budget-why")
            yield Label("Enter chooses · Escape decides later (the work stays paused)",
                        id="budget-help")  # fmt: skip

    def on_mount(self) -> None:
        self.query_one("#budget-options", OptionList).focus()

    @on(OptionList.OptionSelected, "#budget-options")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id != NEW_LIMIT:
            self.dismiss(event.option.id)
            return
        entry = self.query_one("#budget-limit", Input)
        entry.display = True
        entry.focus()

    @on(Input.Submitted, "#budget-limit")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        why = self.query_one("#budget-why", Label)
        try:
            limit = self.question.check_limit(event.value)
        except BudgetUsageError as error:
            why.update(f"✗ {error.message}")
            why.display = True
            return
        self.dismiss(self.question.answer_for(limit))

    def action_cancel(self) -> None:
        self.dismiss(None)


def _option(value: str, label: str, detail: str, recommended: bool = False) -> Option:
    text = Text(label, style="bold")
    if recommended:
        text.append("  (recommended)", style="italic")
    if detail:
        text.append(f"\n  {detail}", style="dim")
    return Option(text, id=value)
