"""The Architect proposes a plan: the user approves it, asks for changes, or asks why.

A simple plan view (the rich DAG view comes later): the plan as text (layers in the
order they run, each task's agent and prompt, the policy), scrollable, and the
Architect's answer to the last "why" above it. Keys: ``y`` approves; ``m`` asks for
changes (type them; Enter sends them to the Architect, who revises the plan and shows
it again); ``w`` asks why (type the question; the Architect answers and the review
comes back); Escape decides later: the review closes unanswered and waits in the
approvals inbox (F2) and its badge, answerable there, the plan still awaiting approval
(``/plan approve ID`` decides it too). Returns the answer string of
:mod:`backend.plans.review` with ``dismiss`` (``None`` for later: nothing is answered).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from backend.events import ChoiceQuestion, PlanReview

HELP = "y approve · m modify · w ask why · Esc decide later (it waits in F2)"
_ASKS = {
    "modify": ("what should change? (Enter sends it to the Architect, Esc decides later)"),
    "why": "what would you like to know? (Enter asks the Architect, Esc decides later)",
}


class PlanReviewScreen(ModalScreen[str | None]):
    CSS_PATH = Path(__file__).with_name("plan_review.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve", id="plan.approve",
                tooltip="Approve the plan as shown; it is marked approved for running."),
        Binding("m", "modify", "Modify", id="plan.modify",
                tooltip="Say what to change; the Architect revises the plan and asks again."),
        Binding("w", "why", "Ask why", id="plan.why",
                tooltip="Ask a question about the plan; the Architect answers, then asks again."),
        Binding("escape", "later", "Decide later", id="plan.later",
                tooltip="Close unanswered; the plan waits in the inbox (F2) or /plan approve ID."),
    ]  # fmt: skip

    def __init__(self, question: ChoiceQuestion) -> None:
        super().__init__()
        if question.plan is None:
            raise ValueError("a plan review needs a question with a plan")
        self.question = question
        self.review: PlanReview = question.plan
        self.asking: str | None = None  # "modify" or "why" while the user types

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-dialog"):
            yield Label(self.question.title, id="plan-title")
            if self.review.explanation:
                yield Static(Text("Architect: " + self.review.explanation), id="plan-explanation")
            with VerticalScroll(id="plan-body"):
                yield Static(Text(self.review.text, no_wrap=False), id="plan-text")
            yield Input(id="plan-input", classes="hidden")
            yield Label(HELP, id="plan-help")

    def on_mount(self) -> None:
        self.query_one("#plan-body").focus()

    def action_approve(self) -> None:
        self.dismiss("approve")

    def action_modify(self) -> None:
        self._ask("modify")

    def action_why(self) -> None:
        self._ask("why")

    def action_later(self) -> None:
        self.dismiss(None)

    def _ask(self, kind: str) -> None:
        self.asking = kind
        field = self.query_one("#plan-input", Input)
        field.placeholder = _ASKS[kind]
        field.value = ""
        field.remove_class("hidden")
        field.focus()

    @on(Input.Submitted, "#plan-input")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if self.asking is not None and text:
            self.dismiss(f"{self.asking}:{text}")
