"""The approvals inbox: everything that waits on the user, from every session, in one place.

Lists each pending command or edit approval, plan review and question (tool choice,
the Architect's clarification), oldest first, with the session that asks and what is
asked; the highlighted one is shown in full below the list. Keys answer the
highlighted one: ``y`` allows once (approves a plan), ``a`` allows for the session,
``n`` denies, ``d`` denies with a reason typed here, ``m`` and ``w`` ask the Architect
to modify a plan or explain it; Enter opens its own dialog (a choice is picked
there); ``g`` goes to its session; Escape closes. Answers leave as ``AnswerQuestion``
intents; a question answered or withdrawn elsewhere leaves the list as it goes.

``widgets.inbox_badge.InboxBadge`` counts what waits (the main screen: one line above
the footer, only while something waits).
"""

from __future__ import annotations

from datetime import tzinfo
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
from backend.budgets.question import BudgetQuestion
from backend.events import ChoiceQuestion
from screens.approval import ApprovalScreen, DiffView
from screens.choice import ChoiceScreen
from screens.plans.plan_review import PlanReviewScreen
from screens.questions.budget_question import BudgetQuestionScreen
from screens.state.intents import AnswerQuestion, SessionAction
from screens.state.pending import PendingChanged, PendingQuestion
from screens.state.store import UiState
from widgets.option_list import OptionList

QuestionDialog = ChoiceScreen | ApprovalScreen | PlanReviewScreen | BudgetQuestionScreen

EMPTY = "Nothing waits on you."
HELP = {
    "approval": "y yes once · a yes for this session · n no · d no, with a reason",
    "plan": "y approve · m modify · w ask why",
    "choice": "Enter picks an option",
}
COMMON_HELP = "Enter opens · g goes to its session · Esc closes"
TYPING = {
    "deny": "why not? (Enter sends it to the agent, Esc goes back)",
    "modify": "what should change? (Enter sends it to the Architect, Esc goes back)",
    "why": "what would you like to know? (Enter asks the Architect, Esc goes back)",
}


def dialog_for(question: ChoiceQuestion) -> QuestionDialog:
    """The question's own dialog: an approval's, a plan review's or a choice's."""
    if question.approval is not None:
        return ApprovalScreen(question)
    if question.plan is not None:
        return PlanReviewScreen(question)
    if isinstance(question, BudgetQuestion):  # a reached limit: the user may type a new one
        return BudgetQuestionScreen(question)
    return ChoiceScreen(question)


def kind_label(pending: PendingQuestion) -> str:
    approval = pending.question.approval
    if approval is not None:
        return {"edit": "edit", "external": "tool"}.get(approval.action, "command")
    return "plan" if pending.kind == "plan" else "question"


class ApprovalsInbox(ModalScreen[None]):
    CSS_PATH = Path(__file__).with_name("approvals_inbox.tcss")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "yes", "Yes / approve", id="inbox.yes",
                tooltip="Allow the highlighted approval this once, or approve its plan."),
        Binding("a", "allow_session", "Yes, this session", id="inbox.allow-session",
                tooltip="Allow it and what it covers for the rest of its session."),
        Binding("n", "deny", "No", id="inbox.deny",
                tooltip="Refuse the highlighted approval; the agent is told the user said no."),
        Binding("d", "deny_with_reason", "No, with a reason", id="inbox.deny-reason",
                tooltip="Refuse and type why; the agent reads your reason."),
        Binding("m", "modify", "Modify plan", id="inbox.modify",
                tooltip="Say what to change in the highlighted plan; the Architect revises it."),
        Binding("w", "why", "Ask why", id="inbox.why",
                tooltip="Ask the Architect about the highlighted plan."),
        Binding("g", "go_to_session", "Go to session", id="inbox.go",
                tooltip="Close the inbox and switch to the session that asks."),
        Binding("escape", "close", "Close", id="inbox.close",
                tooltip="Close the inbox (or stop typing); what waits keeps waiting."),
    ]  # fmt: skip

    def __init__(self, state: UiState, *, tz: tzinfo | None = None) -> None:
        super().__init__()
        self.state = state
        self._tz = tz
        self.typing: tuple[str, str] | None = None
        """(question id, "deny" | "modify" | "why") while a reason or request is typed."""
        self._dialog: tuple[str, QuestionDialog] | None = None
        """The question dialog opened from here, and its question's id."""

    def compose(self) -> ComposeResult:
        with Vertical(id="inbox-dialog"):
            yield OptionList(id="inbox-list")
            yield Label(EMPTY, id="inbox-empty")
            with VerticalScroll(id="inbox-detail"):
                yield Label("", id="inbox-what")
                yield Static("", id="inbox-context")
                yield DiffView("", id="inbox-diff")
                yield Static("", id="inbox-body")
            yield Input(id="inbox-input", classes="hidden")
            yield Label("", id="inbox-help")

    def on_mount(self) -> None:
        self.state.pending.signal.subscribe(self, self._pending_changed)
        self._refill()
        self.query_one("#inbox-list").focus()

    # -- what is shown ------------------------------------------------------------------
    @property
    def listed(self) -> list[str]:
        """The question ids in the list, top to bottom."""
        options = self.query_one("#inbox-list", OptionList)
        return [str(options.get_option_at_index(i).id) for i in range(options.option_count)]

    def selected(self) -> PendingQuestion | None:
        options = self.query_one("#inbox-list", OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        question_id = options.get_option_at_index(options.highlighted).id
        return self.state.pending.get(str(question_id))

    def _row(self, pending: PendingQuestion) -> Text:
        session = self.state.sessions.get(pending.session_id or "")
        name = session.name if session is not None else "—"
        when = pending.asked_at.astimezone(self._tz).strftime("%H:%M:%S")
        row = Text(f"{when}  ", style="dim")
        row.append(f"{name[:18]:<18}  ", style="bold")
        row.append(f"{kind_label(pending):<8}  ")
        row.append(pending.summary)
        return row

    def _refill(self) -> None:
        options = self.query_one("#inbox-list", OptionList)
        before = self.selected()
        pending = self.state.pending.items()
        options.clear_options()
        options.add_options(Option(self._row(p), id=p.question_id) for p in pending)
        ids = [p.question_id for p in pending]
        if ids:
            keep = before.question_id if before is not None and before.question_id in ids else None
            options.highlighted = ids.index(keep) if keep is not None else 0
        count = len(ids)
        self.query_one("#inbox-dialog").border_title = f"Waiting on you · {count}"
        options.display = bool(ids)
        self.query_one("#inbox-empty").display = not ids
        self.query_one("#inbox-detail").display = bool(ids)
        self._show(self.selected())

    def _show(self, pending: PendingQuestion | None) -> None:
        help_line = self.query_one("#inbox-help", Label)
        if pending is None:
            help_line.update("Esc closes")
            return
        question = pending.question
        self.query_one("#inbox-what", Label).update(Text(question.title))
        diff = self.query_one("#inbox-diff", DiffView)
        diff.display = False
        approval = question.approval
        if approval is not None:
            context = f"{approval.op} · asked by the {approval.agent} · mode {approval.mode}"
            context += f"\nsandbox: {approval.sandbox}"
            if approval.action == "edit":
                body = Text("")
                diff.diff = approval.diff or "(no change to show)"
                diff.update(diff.coloured())
                diff.display = True
            else:
                where = f"  (in {approval.cwd})" if approval.cwd not in ("", ".") else ""
                body = Text(f"$ {approval.command}{where}")
        elif question.plan is not None:
            context = f"Architect: {question.plan.explanation}" if question.plan.explanation else ""
            body = Text(question.plan.text)
        else:
            context = question.prompt
            body = Text()
            for number, option in enumerate(question.options, 1):
                body.append(f"{number}. {option.label}")
                if option.recommended:
                    body.append("  (recommended)", style="italic")
                if option.detail:
                    body.append(f"  {option.detail}", style="dim")
                body.append("\n")
        shown = self.query_one("#inbox-context", Static)
        shown.update(Text(context))
        shown.display = bool(context)
        self.query_one("#inbox-body", Static).update(body)
        help_line.update(f"{HELP[pending.kind]} · {COMMON_HELP}")

    @on(OptionList.OptionHighlighted, "#inbox-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show(self.selected())

    def _pending_changed(self, changed: PendingChanged) -> None:
        if not changed.added:
            if self.typing is not None and self.typing[0] == changed.question_id:
                self._stop_typing()
            if self._dialog is not None and self._dialog[0] == changed.question_id:
                dialog = self._dialog[1]
                self._dialog = None
                if dialog.is_current:
                    dialog.dismiss(None)  # settled elsewhere: its answer changes nothing
        self._refill()

    # -- answers --------------------------------------------------------------------------
    def _answer(self, pending: PendingQuestion, value: str | None) -> None:
        self.post_message(AnswerQuestion(pending.question_id, value))

    def _chosen(self, kind: str) -> PendingQuestion | None:
        """The highlighted question when it is of ``kind``; else says what the key is for."""
        pending = self.selected()
        if pending is None or self.typing is not None:
            return None
        if pending.kind != kind:
            what = {"approval": "an approval", "plan": "a plan"}.get(kind, kind)
            self.notify(f"That key answers {what}; Enter opens this one.", markup=False)
            return None
        return pending

    def action_yes(self) -> None:
        pending = self.selected()
        if pending is not None and pending.kind == "plan" and self.typing is None:
            self._answer(pending, "approve")
        elif (pending := self._chosen("approval")) is not None:
            self._answer(pending, answers.allow_once())

    async def action_allow_session(self) -> None:
        pending = self._chosen("approval")
        if pending is None or pending.question.approval is None:
            return
        rules = pending.question.approval.session_rules
        if len(rules) <= 1:
            self._answer(pending, answers.allow_for_session(rules[0]) if rules else "allow")
            return
        dialog = await self._open(pending)  # several rules: pick one in the approval's dialog
        if isinstance(dialog, ApprovalScreen):
            dialog.action_allow_session()

    def action_deny(self) -> None:
        pending = self._chosen("approval")
        if pending is not None:
            self._answer(pending, answers.deny())

    def action_deny_with_reason(self) -> None:
        pending = self._chosen("approval")
        if pending is not None:
            self._start_typing(pending, "deny")

    def action_modify(self) -> None:
        pending = self._chosen("plan")
        if pending is not None:
            self._start_typing(pending, "modify")

    def action_why(self) -> None:
        pending = self._chosen("plan")
        if pending is not None:
            self._start_typing(pending, "why")

    def action_go_to_session(self) -> None:
        pending = self.selected()
        if pending is None or pending.session_id is None:
            return
        self.post_message(SessionAction("switch", pending.session_id))
        self.dismiss(None)

    def action_close(self) -> None:
        if self.typing is not None:
            self._stop_typing()
        else:
            self.dismiss(None)

    @on(OptionList.OptionSelected, "#inbox-list")
    async def _opened(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        pending = self.state.pending.get(str(event.option.id))
        if pending is not None:
            await self._open(pending)

    async def _open(self, pending: PendingQuestion) -> QuestionDialog:
        dialog = dialog_for(pending.question)
        self._dialog = (pending.question_id, dialog)

        def answered(value: str | None) -> None:
            if self._dialog is not None and self._dialog[1] is dialog:
                self._dialog = None
                if value is not None or not pending.waits_on_escape:  # later: back here
                    self._answer(pending, value)

        await self.app.push_screen(dialog, answered)
        return dialog

    # -- typing a reason or a request ----------------------------------------------------
    def _start_typing(self, pending: PendingQuestion, kind: str) -> None:
        self.typing = (pending.question_id, kind)
        field = self.query_one("#inbox-input", Input)
        field.placeholder = TYPING[kind]
        field.value = ""
        field.remove_class("hidden")
        field.focus()

    def _stop_typing(self) -> None:
        self.typing = None
        field = self.query_one("#inbox-input", Input)
        field.add_class("hidden")
        self.query_one("#inbox-list").focus()

    @on(Input.Submitted, "#inbox-input")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        if self.typing is None:
            return
        question_id, kind = self.typing
        text = event.value.strip()
        if kind != "deny" and not text:
            return  # a plan's request needs words; Esc goes back
        pending = self.state.pending.get(question_id)
        self._stop_typing()
        if pending is not None:
            value = answers.deny(text) if kind == "deny" else f"{kind}:{text}"
            self._answer(pending, value)
