"""What waits on the user: every pending question of every session, oldest first.

The engine asks through events carrying a future (``backend.questions``): a command
or edit approval, a plan review, a tool choice or an Architect's clarification. The
app adds each question here when asked and removes it when settled (answered here,
answered by another front end, timed out or withdrawn), so the approvals inbox, the
session list's "waiting for you" marker and the badge all read one registry and
follow one signal. Answering resolves the question's future; the engine then
publishes its settlement, which removes it (a second removal changes nothing).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from textual.dom import DOMNode
from textual.signal import Signal

if TYPE_CHECKING:  # the engine's models (pydantic) load after the first frame
    from backend.events import ChoiceQuestion

QuestionKind = Literal["approval", "plan", "choice"]


@dataclass(frozen=True)
class PendingQuestion:
    """One question waiting on the user, and the future its answer resolves."""

    question_id: str
    session_id: str | None
    question: ChoiceQuestion
    answer: asyncio.Future[str | None]
    asked_at: datetime

    @property
    def kind(self) -> QuestionKind:
        if self.question.approval is not None:
            return "approval"
        if self.question.plan is not None:
            return "plan"
        return "choice"

    @property
    def waits_on_escape(self) -> bool:
        """Whether Escape on its dialog leaves it waiting ("decide later": a plan review,
        a choice) rather than answering it (an approval's Escape is its "No")."""
        return self.kind != "approval"

    @property
    def summary(self) -> str:
        """What is asked, on one line (the inbox's row)."""
        return " ".join(self.question.title.split())


@dataclass(frozen=True)
class PendingChanged:
    """A question joined (``added``) or left the registry; ``count`` is how many wait now."""

    question_id: str
    session_id: str | None
    added: bool
    count: int


class PendingQuestions:
    """The registry of pending questions, published through ``signal``."""

    def __init__(self, owner: DOMNode) -> None:
        self._items: dict[str, PendingQuestion] = {}
        self.signal: Signal[PendingChanged] = Signal(owner, "pending")
        """A question was asked or settled (any session)."""

    # -- queries ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._items

    def get(self, question_id: str) -> PendingQuestion | None:
        return self._items.get(question_id)

    def items(self, session_id: str | None = None) -> list[PendingQuestion]:
        """Every pending question (or one session's), oldest first."""
        found = [q for q in self._items.values() if session_id in (None, q.session_id)]
        return sorted(found, key=lambda q: q.asked_at)  # stable: ties keep arrival order

    def waiting_sessions(self) -> frozenset[str]:
        """The sessions with at least one question waiting on the user."""
        return frozenset(q.session_id for q in self._items.values() if q.session_id is not None)

    def count(self, session_id: str | None = None) -> int:
        if session_id is None:
            return len(self._items)
        return sum(1 for q in self._items.values() if q.session_id == session_id)

    # -- changes ----------------------------------------------------------------------
    def add(self, pending: PendingQuestion) -> None:
        if pending.answer.done() or pending.question_id in self._items:
            return  # settled before it reached the UI, or heard twice
        self._items[pending.question_id] = pending
        self._publish(pending, added=True)

    def settle(self, question_id: str) -> PendingQuestion | None:
        """The question is no longer pending (however it ended); the one removed, if any."""
        pending = self._items.pop(question_id, None)
        if pending is not None:
            self._publish(pending, added=False)
        return pending

    def answer(self, question_id: str, value: str | None) -> bool:
        """Answer a pending question; False when it is no longer pending (answered
        elsewhere, withdrawn): then nothing is sent."""
        pending = self.settle(question_id)
        if pending is None or pending.answer.done():
            return False
        pending.answer.set_result(value)
        return True

    def _publish(self, pending: PendingQuestion, *, added: bool) -> None:
        self.signal.publish(
            PendingChanged(pending.question_id, pending.session_id, added, len(self._items))
        )
