"""The engine's questions to the user, shown one dialog at a time.

A question arrives with the future its answer resolves; the dialog's answer (or
``None``, "decide later") resolves it. Every question is followed by a settled
event: when it was answered elsewhere (the CLI, the MCP server) or withdrawn (the
turn that asked was stopped) while its dialog is open, the dialog closes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any

from textual.app import App

from backend.questions import ChoiceQuestion
from screens.approval import ApprovalScreen
from screens.choice import ChoiceScreen
from screens.plan_review import PlanReviewScreen

Dialog = ChoiceScreen | ApprovalScreen | PlanReviewScreen


@dataclass(frozen=True)
class _Asked:
    question_id: str
    question: ChoiceQuestion
    answer: asyncio.Future[str | None]


class QuestionDialogs:
    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._waiting: deque[_Asked] = deque()
        self._open: tuple[_Asked, Dialog] | None = None

    @property
    def open_question(self) -> str | None:
        return self._open[0].question_id if self._open is not None else None

    def asked(
        self, question_id: str, question: ChoiceQuestion, answer: asyncio.Future[str | None]
    ) -> None:
        self._waiting.append(_Asked(question_id, question, answer))
        self._show_next()

    def settled(self, question_id: str) -> None:
        """The question is no longer pending: close its dialog, or never show it."""
        self._waiting = deque(a for a in self._waiting if a.question_id != question_id)
        if self._open is None or self._open[0].question_id != question_id:
            return
        dialog = self._open[1]
        if dialog.is_current:
            dialog.dismiss(None)  # its answer is already settled: None changes nothing
        # Under another screen (the palette) it stays; answering it then does nothing.

    def _show_next(self) -> None:
        while self._open is None and self._waiting:
            asked = self._waiting.popleft()
            if asked.answer.done():
                continue
            # An approval (edit, command, outside tool) gets its own modal: y/a/n/d/Esc;
            # a plan review its own: y/m/w/Esc.
            dialog: Dialog
            if asked.question.approval is not None:
                dialog = ApprovalScreen(asked.question)
            elif asked.question.plan is not None:
                dialog = PlanReviewScreen(asked.question)
            else:
                dialog = ChoiceScreen(asked.question)
            self._open = (asked, dialog)

            def answered(value: str | None, asked: _Asked = asked) -> None:
                if not asked.answer.done():
                    asked.answer.set_result(value)
                self._open = None
                self._show_next()

            self._app.push_screen(dialog, answered)
