"""Questions the engine puts to the user, as events carrying a future.

A part of the engine that needs the user's answer (a tool choice today; a command
approval or a plan review next) calls :meth:`QuestionBoard.ask`. The board keeps
the question pending, publishes a :class:`~backend.events.QuestionAsked` event
that carries the question and the future its answer resolves, and waits. Any
front end that follows the events may answer: by resolving the event's future,
or with :meth:`QuestionBoard.answer` by the question's id (the CLI and the MCP
server hold only the id). ``None`` declines. Many questions may be pending at
once, across sessions, so an inbox can list them (:meth:`QuestionBoard.pending`).
A :class:`~backend.events.QuestionSettled` event follows every question.

Only front ends that show questions say so (:meth:`QuestionBoard.attach`); with
none attached (``sylk run``), :meth:`QuestionBoard.ask` returns ``None`` at once
and the caller says in its answer how to make the choice with a command instead.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

from backend.events import (
    ChoiceOption,
    ChoiceQuestion,
    EngineEvent,
    QuestionAsked,
    QuestionSettled,
)

Ask = Callable[[ChoiceQuestion], Awaitable[str | None]]


class QuestionBoard:
    """The questions waiting for the user, published through ``publish``."""

    def __init__(self, publish: Callable[[EngineEvent], None]) -> None:
        self._publish = publish
        self._pending: dict[str, QuestionAsked] = {}
        self._answerers = 0

    def attach(self) -> Callable[[], None]:
        """A front end that shows questions; returns the function that detaches it."""
        self._answerers += 1
        attached = True

        def detach() -> None:
            nonlocal attached
            if attached:
                attached = False
                self._answerers -= 1
                if not self._answerers:
                    self.withdraw_all()

        return detach

    @property
    def answered_here(self) -> bool:
        return self._answerers > 0

    def pending(self, session_id: str | None = None) -> list[QuestionAsked]:
        """Questions still waiting, oldest first (one session's, or all)."""
        return [q for q in self._pending.values() if session_id in (None, q.session_id)]

    async def ask(self, question: ChoiceQuestion, session_id: str | None = None) -> str | None:
        """Wait for the user's answer; None when declined, withdrawn or nobody can answer."""
        if not self.answered_here:
            return None
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        asked = QuestionAsked(
            session_id=session_id,
            question_id=f"q_{uuid.uuid4().hex[:12]}",
            question=question,
            answer=answer,
        )
        self._pending[asked.question_id] = asked
        answer.add_done_callback(lambda _: self._settled(asked))
        self._publish(asked)
        try:
            return await answer
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the asker itself was cancelled (the turn was stopped)
            return None  # withdrawn: the last front end left, or the engine closed

    def answer(self, question_id: str, value: str | None) -> bool:
        """Answer a pending question by id; False if it is not (or no longer) pending."""
        asked = self._pending.get(question_id)
        if asked is None or asked.answer.done():
            return False
        asked.answer.set_result(value)
        return True

    def withdraw_all(self) -> None:
        """Every pending question is declined (the last front end left, or shutdown)."""
        for asked in list(self._pending.values()):
            if not asked.answer.done():
                asked.answer.cancel()

    def _settled(self, asked: QuestionAsked) -> None:
        self._pending.pop(asked.question_id, None)
        future = asked.answer
        withdrawn = future.cancelled()
        value = None if withdrawn or future.exception() else future.result()
        self._publish(
            QuestionSettled(
                session_id=asked.session_id,
                question_id=asked.question_id,
                value=value,
                withdrawn=withdrawn,
            )
        )


__all__ = ["Ask", "ChoiceOption", "ChoiceQuestion", "QuestionBoard"]
