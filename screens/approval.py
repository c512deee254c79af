"""An agent asks to edit a file, run a command or call an outside tool: the user decides.

Shows the command and where it runs, or the file and its diff (coloured, scrollable),
with the op, the agent, the mode and how the action is confined. Keys: ``y`` allows
this once; ``a`` allows it for the rest of the session (a command's prefix pattern or
the exact command, picked from a list when both are offered; an edit's file); ``n``
denies; ``d`` denies with a reason typed here, which the agent reads; Escape denies.
Returns the answer string of :mod:`backend.approvals.answers` with ``dismiss``
(``None`` for Escape).
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
from textual.widgets.option_list import Option

from backend.approvals import answers
from backend.events import ApprovalRequest, ChoiceQuestion
from widgets.option_list import OptionList

HELP = "y yes once · a yes for this session · n no · d no, with a reason · Esc no"


class DiffView(Static):
    """A unified diff, added lines in the theme's success colour, removed in its error."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff--added",
        "diff--removed",
        "diff--hunk",
        "diff--file",
    }

    def __init__(self, diff: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.diff = diff

    def on_mount(self) -> None:
        self.update(self.coloured())

    def coloured(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for line in self.diff.splitlines():
            if line.startswith(("+++", "---")):
                style = self.get_component_rich_style("diff--file")
            elif line.startswith("+"):
                style = self.get_component_rich_style("diff--added")
            elif line.startswith("-"):
                style = self.get_component_rich_style("diff--removed")
            elif line.startswith("@@"):
                style = self.get_component_rich_style("diff--hunk")
            else:
                style = None
            text.append(line + "\n", style=style or "")
        return text


class ApprovalScreen(ModalScreen[str | None]):
    CSS_PATH = Path(__file__).with_name("approval.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "allow_once", "Yes, once", id="approval.allow-once",
                tooltip="Let the agent do this, this once."),
        Binding("a", "allow_session", "Yes, this session", id="approval.allow-session",
                tooltip="Let it do this (this command's kind, or this file's edits) for the "
                "rest of the session without asking."),
        Binding("n", "deny", "No", id="approval.deny",
                tooltip="Refuse; the agent is told the user said no."),
        Binding("d", "deny_with_reason", "No, with a reason", id="approval.deny-reason",
                tooltip="Refuse and type why; the agent reads your reason."),
        Binding("escape", "cancel", "No", id="approval.cancel",
                tooltip="Refuse (as n)."),
    ]  # fmt: skip

    def __init__(self, question: ChoiceQuestion) -> None:
        super().__init__()
        if question.approval is None:
            raise ValueError("an approval screen needs a question with an approval request")
        self.question = question
        self.request: ApprovalRequest = question.approval

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-dialog"):
            yield Label(self.question.title, id="approval-title")
            yield Label(f"{request.op} · asked by the {request.agent} · mode {request.mode}",
                        id="approval-prompt")  # fmt: skip
            unconfined = request.sandbox.startswith("none")
            yield Static(f"sandbox: {request.sandbox}", id="approval-sandbox",
                         classes="unconfined" if unconfined else "")  # fmt: skip
            if request.action == "edit":
                with VerticalScroll(id="approval-diff"):
                    yield DiffView(request.diff or "(no change to show)")
            else:
                where = f"  (in {request.cwd})" if request.cwd not in ("", ".") else ""
                yield Static(Text(f"$ {request.command}{where}"), id="approval-command")
            choices = [Option(self._rule_label(rule), id=rule) for rule in request.session_rules]
            yield OptionList(*choices, id="approval-rules", classes="hidden")
            yield Input(placeholder="why not? (Enter sends, Esc refuses without it)",
                        id="approval-reason", classes="hidden")  # fmt: skip
            yield Label(HELP, id="approval-help")

    def _rule_label(self, rule: str) -> str:
        if self.request.action == "edit":
            return f"edits to {rule}"
        return f"{rule}   (any command it covers)" if rule.endswith(" *") else rule

    def on_mount(self) -> None:
        if self.request.action == "edit":
            self.query_one("#approval-diff").focus()

    # -- answers ----------------------------------------------------------------------
    def action_allow_once(self) -> None:
        self.dismiss(answers.allow_once())

    def action_allow_session(self) -> None:
        rules = self.request.session_rules
        if len(rules) == 1:
            self.dismiss(answers.allow_for_session(rules[0]))
            return
        if not rules:
            self.dismiss(answers.allow_once())
            return
        chooser = self.query_one("#approval-rules", OptionList)
        chooser.remove_class("hidden")
        chooser.highlighted = 0
        chooser.focus()
        self.query_one("#approval-help", Label).update(
            "Enter keeps the highlighted rule for this session · Esc no"
        )

    @on(OptionList.OptionSelected, "#approval-rules")
    def _rule_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(answers.allow_for_session(event.option.id))

    def action_deny(self) -> None:
        self.dismiss(answers.deny())

    def action_deny_with_reason(self) -> None:
        reason = self.query_one("#approval-reason", Input)
        reason.remove_class("hidden")
        reason.focus()

    @on(Input.Submitted, "#approval-reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(answers.deny(event.value))

    def action_cancel(self) -> None:
        self.dismiss(None)
