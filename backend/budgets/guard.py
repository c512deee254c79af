"""The budget check before each model call: under every limit, go on; at one, ask.

Why the call waits: a limit reached mid-plan must neither fail the work (it would be
lost or redone) nor let it run on unseen. The call pauses and the user is asked
through :class:`~backend.questions.QuestionBoard` (the approvals inbox): continue with
a new limit (the answer carries it: ``continue:N``), or stop. Checks that reach the
same limit at once (two nodes of a plan) share one question. "Stop" ends the call's
turn with the reason, and :attr:`BudgetHooks.stop_work` ends the session's running
plan; later calls over that same limit stop without asking again, until the limit
changes. With nobody to ask (``sylk run``) the call stops and says how to raise it.
A limit changed by ``/budget`` while its question is open withdraws the question
(:meth:`BudgetGuard.limits_changed`): answering it later must not overwrite the newer
limit. The waiting calls look again: under the new limit they go on, else they ask anew.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from backend.archive.store import Archive
from backend.budgets.budget_dsl import BudgetUsageError
from backend.budgets.limits import BUDGET_KEY, effective_limits, with_limit
from backend.budgets.question import CONTINUE, STOP, BudgetQuestion, raw_amount, read_new_limit
from backend.budgets.report import amount, limit_name
from backend.budgets.spend import spend_of
from backend.config.budgets import BudgetLimits, BudgetMeasure, BudgetScope
from backend.events import ChoiceOption
from backend.questions import QuestionBoard

_CHECKS: tuple[tuple[BudgetScope, BudgetMeasure], ...] = (
    ("session", "tokens"),
    ("session", "cost"),
    ("pipeline", "tokens"),
    ("pipeline", "cost"),
)


@dataclass(frozen=True)
class BudgetHooks:
    """What the guard needs of the engine, as plain callables."""

    metadata_of: Callable[[str], Mapping[str, Any]]  # a session's metadata
    set_metadata: Callable[[str, str, Any], Awaitable[object]]  # kept in the archive
    notice: Callable[..., Awaitable[object]]  # (session_id, text, **payload) to the transcript
    stop_work: Callable[[str], None]  # end the session's running plan (never awaited here)


@dataclass(frozen=True)
class Reached:
    """One limit reached: which, its value, and what was used against it."""

    scope: BudgetScope
    measure: BudgetMeasure
    limit: float
    used: float
    pipeline_id: str | None

    @property
    def name(self) -> str:
        return limit_name(self.scope, self.measure, self.pipeline_id)

    def said(self) -> str:
        used, limit = amount(self.measure, self.used), amount(self.measure, self.limit)
        return f"{self.name}: {used} used of {limit}"

    def payload(self) -> dict[str, Any]:
        return {"scope": self.scope, "measure": self.measure, "limit": self.limit,
                "used": self.used, "pipeline": self.pipeline_id}  # fmt: skip


class _Withdrawn(Exception):
    """The open question was withdrawn: the limit changed meanwhile; look again."""


class BudgetGuard:
    """``check(session_id, pipeline_id)``: the engine's before-call hook (see module)."""

    def __init__(
        self,
        *,
        archive: Archive,
        questions: QuestionBoard,
        configured: BudgetLimits,
        hooks: BudgetHooks,
    ) -> None:
        self._archive = archive
        self._questions = questions
        self.configured = configured
        self._hooks = hooks
        self._asking: dict[tuple[Any, ...], asyncio.Task[str | None]] = {}
        self._stopped: set[tuple[Any, ...]] = set()
        self._open: dict[tuple[Any, ...], asyncio.Task[str | None]] = {}  # questions asked

    def limits_changed(self, session_id: str) -> None:
        """The session's limits changed by command: withdraw its open budget questions
        (their dialogs close) and forget its "stop"s; the waiting calls look again."""
        self._stopped = {key for key in self._stopped if key[0] != session_id}
        for key, ask in list(self._open.items()):
            if key[0] == session_id:
                ask.cancel()

    def limits(self, session_id: str) -> BudgetLimits:
        return effective_limits(self.configured, self._hooks.metadata_of(session_id))

    async def check(self, session_id: str, pipeline_id: str | None) -> str | None:
        """None: call the model; else why not (the turn ends with it)."""
        while True:
            reached = await self._reached(session_id, pipeline_id)
            if reached is None:
                return None
            key = (session_id, reached.scope, reached.measure, reached.limit,
                   reached.pipeline_id)  # fmt: skip
            if key in self._stopped:
                return _stopped_text(reached)
            task = self._asking.get(key)
            if task is None:
                task = asyncio.create_task(
                    self._decide(session_id, reached, key), name=f"sylk-budget-{session_id[:8]}"
                )
                self._asking[key] = task
                task.add_done_callback(partial(self._asked, key))
            try:
                stopped = await asyncio.shield(task)
            except _Withdrawn:
                continue
            if stopped is not None:
                return stopped

    def _asked(self, key: tuple[Any, ...], _: object) -> None:
        self._asking.pop(key, None)

    async def _reached(self, session_id: str, pipeline_id: str | None) -> Reached | None:
        limits = self.limits(session_id)
        if limits.empty:
            return None
        for scope, measure in _CHECKS:
            limit = limits.limit(scope, measure)
            if limit is None or (scope == "pipeline" and pipeline_id is None):
                continue
            spent = await spend_of(
                self._archive, session_id, pipeline_id if scope == "pipeline" else None
            )
            if spent.of(measure) >= limit:
                return Reached(scope, measure, limit, spent.of(measure),
                               pipeline_id if scope == "pipeline" else None)  # fmt: skip
        return None

    async def _decide(self, session_id: str, reached: Reached, key: tuple[Any, ...]) -> str | None:
        """Ask once; None: go on under a new limit (stored), else the stop reason."""
        payload = {"budget": reached.payload()}
        if self._questions.answered_here:
            await self._hooks.notice(
                session_id,
                f"⏸ Budget reached, work paused ({reached.said()}): continue with a new "
                "limit, or stop? (the approvals inbox, F2)",
                **payload,
            )
        while True:
            answer = await self._ask(session_id, reached, key)
            if self.limits(session_id).limit(reached.scope, reached.measure) != reached.limit:
                await self._withdrawn(session_id, reached)  # changed while asked: look again
            if answer is None:
                why = _nobody_text(reached) if not self._questions.answered_here else None
                return await self._stop(session_id, reached, key, why)
            if answer == STOP:
                return await self._stop(session_id, reached, key, None)
            new_limit = parse_new_limit(answer, reached)
            if new_limit is not None:
                break
        metadata = self._hooks.metadata_of(session_id)
        kept = with_limit(metadata, reached.scope, reached.measure, new_limit)
        await self._hooks.set_metadata(session_id, BUDGET_KEY, kept)
        shown = amount(reached.measure, new_limit)
        await self._hooks.notice(
            session_id, f"▶ Budget raised, work resumed: {reached.name} limit now {shown}",
            budget={**reached.payload(), "new_limit": new_limit},
        )  # fmt: skip
        return None

    async def _ask(self, session_id: str, reached: Reached, key: tuple[Any, ...]) -> str | None:
        """The user's answer; :class:`_Withdrawn` when :meth:`limits_changed` withdrew it."""
        ask = asyncio.create_task(self._questions.ask(question_for(reached), session_id))
        self._open[key] = ask
        try:
            return await ask
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if ask.cancelled() and (current is None or not current.cancelling()):
                await self._withdrawn(session_id, reached)
            raise
        finally:
            self._open.pop(key, None)

    async def _withdrawn(self, session_id: str, reached: Reached) -> None:
        await self._hooks.notice(
            session_id, f"↻ Budget question withdrawn: the {reached.name} limit was changed",
            budget={**reached.payload(), "withdrawn": True},
        )  # fmt: skip
        raise _Withdrawn

    async def _stop(
        self, session_id: str, reached: Reached, key: tuple[Any, ...], why: str | None
    ) -> str:
        text = why or _stopped_text(reached)
        if why is None:  # the user said stop: later calls over this limit stop too
            self._stopped.add(key)
        await self._hooks.notice(session_id, f"■ {text}", budget={**reached.payload(),
                                 "stopped": True})  # fmt: skip
        self._hooks.stop_work(session_id)
        return text


def question_for(reached: Reached) -> BudgetQuestion:
    """Continue with the limit doubled (recommended) or quadrupled, or stop."""
    options = [
        ChoiceOption(
            f"{CONTINUE}{raw_amount(reached.measure, reached.limit * factor)}",
            f"Continue with a limit of {amount(reached.measure, reached.limit * factor)}",
            f"the {reached.name} limit goes from {amount(reached.measure, reached.limit)}",
            factor == 2,
        )
        for factor in (2, 4)
    ]
    options.append(ChoiceOption(STOP, "Stop", "the work ends here; nothing more is spent"))
    return BudgetQuestion(
        title=f"Budget reached: {reached.name}",
        prompt=f"{reached.said()}. The next model call waits for your answer.",
        options=options,
        scope=reached.scope,
        measure=reached.measure,
        limit=reached.limit,
        used=reached.used,
        limit_label=reached.name,
    )


def parse_new_limit(answer: str, reached: Reached) -> float | None:
    """``continue:N`` (or just N; ``2k``, ``$3.50``) with N above what was used; None:
    not such an answer (the check: :func:`~backend.budgets.question.read_new_limit`)."""
    try:
        return read_new_limit(answer, reached.measure, reached.used)
    except BudgetUsageError:
        return None


def _stopped_text(reached: Reached) -> str:
    return (
        f"Budget reached, work stopped ({reached.said()}); "
        f"raise it with /budget {reached.scope} {reached.measure} N"
    )


def _nobody_text(reached: Reached) -> str:
    return (
        f"Budget reached, work stopped ({reached.said()}): nobody here can answer; raise it "
        f"with /budget {reached.scope} {reached.measure} N or [budgets] in the config"
    )
