"""The engine's questions to the user: every one to the inbox, the on-screen session's
also to a dialog, one dialog at a time.

Every question joins the UI state's pending registry (``screens.state.pending``),
which the approvals inbox, its badge and the session list read. A question from the
session on screen (or from no session) also opens its dialog, since that is what the
user is looking at; a question from a session in the background never covers the
screen: it waits in the inbox (F2) and the badge counts it. A dialog waiting for its
turn whose session left the screen stays in the inbox instead.

A dialog's answer resolves the question's future. Escape on a plan review or a choice
("decide later") answers nothing: the dialog closes and the question keeps waiting in
the inbox and the badge, answerable there (the asking turn waits with it); Escape on
an approval is its "No" and answers it so.
Every question is followed by a settled event: when it was answered elsewhere (the
inbox, the CLI, the MCP server) or withdrawn (the turn that asked was stopped, a
timeout) while its dialog is open, the dialog closes and the inbox drops it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from backend.clock import utc_now
from screens.state.pending import PendingQuestion, PendingQuestions
from sylk_tui.engine_link.messages import ChoiceRequested

if TYPE_CHECKING:  # the dialogs load with the first question, after the first frame
    from screens.approvals_inbox import QuestionDialog


class QuestionDialogs:
    def __init__(
        self,
        app: App[Any],
        pending: PendingQuestions,
        on_screen: Callable[[str | None], bool],
    ) -> None:
        self._app = app
        self._pending = pending
        self._on_screen = on_screen
        self._waiting: deque[PendingQuestion] = deque()
        self._open: tuple[PendingQuestion, QuestionDialog] | None = None

    @property
    def open_question(self) -> str | None:
        return self._open[0].question_id if self._open is not None else None

    def asked(self, request: ChoiceRequested) -> None:
        asked_at = request.asked_at or utc_now()
        pending = PendingQuestion(request.question_id, request.session_id, request.question,
                                  request.answer, asked_at)  # fmt: skip
        self._pending.add(pending)
        if self._pops(pending):
            self._waiting.append(pending)
            self._show_next()

    def answer(self, question_id: str, value: str | None) -> bool:
        """Answer a pending question (from the inbox); False when it no longer waits."""
        return self._pending.answer(question_id, value)

    def settled(self, question_id: str) -> None:
        """The question is no longer pending: close its dialog, or never show it."""
        self._pending.settle(question_id)
        self._waiting = deque(a for a in self._waiting if a.question_id != question_id)
        if self._open is None or self._open[0].question_id != question_id:
            return
        dialog = self._open[1]
        if dialog.is_current:
            dialog.dismiss(None)  # its answer is already settled: None changes nothing
        # Under another screen (the palette) it stays; answering it then does nothing.

    def _pops(self, pending: PendingQuestion) -> bool:
        """Whether the question covers the screen now: it is the on-screen session's
        and the inbox (which lists it already) is not open."""
        from screens.approvals_inbox import ApprovalsInbox

        if isinstance(self._app.screen, ApprovalsInbox):
            return False
        return self._on_screen(pending.session_id)

    def _show_next(self) -> None:
        while self._open is None and self._waiting:
            pending = self._waiting.popleft()
            if pending.answer.done() or pending.question_id not in self._pending:
                continue
            if not self._pops(pending):
                continue  # its session left the screen: it waits in the inbox
            # An approval (edit, command, outside tool) gets its own modal: y/a/n/d/Esc;
            # a plan review its own: y/m/w/Esc.
            from screens.approvals_inbox import dialog_for

            dialog = dialog_for(pending.question)
            self._open = (pending, dialog)

            def answered(value: str | None, pending: PendingQuestion = pending) -> None:
                if value is not None or not pending.waits_on_escape:
                    self._pending.answer(pending.question_id, value)
                self._open = None
                self._show_next()

            self._app.push_screen(dialog, answered)
