"""Budgets wired into the engine: the check before every model call, and ``/budget``.

Why here: the guard (``backend.budgets``) knows limits, use and the question; what it
needs of the engine (a session's metadata, the transcript, stopping a running plan)
it gets as callables from :func:`install_budgets`, so it stays below the engine.
"Stop" ends the session's running plan in a task of its own: the check runs inside
one of the plan's turns, which the plan's end waits for.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

from backend.budgets import (
    BudgetGuard,
    BudgetHooks,
    effective_limits,
    spend_of,
    with_limit,
    without_limits,
)
from backend.budgets.limits import BUDGET_KEY, is_off
from backend.budgets.report import budget_text
from backend.budgets.spend import pipelines_of
from backend.config.budgets import BudgetMeasure, BudgetScope
from backend.errors import SylkError

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger("sylk.budgets")


class BudgetWork:
    """The engine's budget guard and the tasks that stop plans at a user's "stop"
    (owned here; each ends with its plan, which the engine's close stops)."""

    def __init__(self, parts: EngineParts) -> None:
        self._parts = parts
        self._stopping: set[asyncio.Task[Any]] = set()
        sessions = parts.sessions
        self.guard = BudgetGuard(
            archive=parts.archive,
            questions=parts.questions,
            configured=parts.settings.budgets,
            hooks=BudgetHooks(
                metadata_of=lambda sid: sessions.get(sid).metadata,
                set_metadata=sessions.set_metadata,
                notice=sessions.notice,
                stop_work=self._stop_plan,
            ),
        )

    def _stop_plan(self, session_id: str) -> None:
        plan_id = self._parts.dags.running(session_id)
        if plan_id is None:
            return
        task = asyncio.create_task(
            self._cancel(session_id, plan_id), name=f"sylk-budget-stop-{plan_id}"
        )
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def _cancel(self, session_id: str, plan_id: str) -> None:
        try:
            await self._parts.dags.cancel(session_id, plan_id)
        except SylkError as error:  # it ended meanwhile: nothing to stop
            log.info("budget stop of plan %s: %s", plan_id, error)

    async def aclose(self) -> None:
        for task in list(self._stopping):
            task.cancel()
        await asyncio.gather(*self._stopping, return_exceptions=True)


async def budget_command(parts: EngineParts, session_id: str, args: dict[str, str]) -> str:
    """``/budget`` (the grammar: ``backend.budgets.budget_dsl``): show, set, off, on."""
    sessions = parts.sessions
    action = args.get("action", "show")
    if action == "off":
        await sessions.set_metadata(session_id, BUDGET_KEY, without_limits())
        if parts.budgets is not None:
            parts.budgets.limits_changed(session_id)
        return "budgets off for this session: no token or cost limit holds"
    if action == "on":
        await sessions.set_metadata(session_id, BUDGET_KEY, {})
    elif action == "set":
        scope: BudgetScope = "pipeline" if args.get("scope") == "pipeline" else "session"
        measure: BudgetMeasure = "cost" if args.get("measure") == "cost" else "tokens"
        raw = args.get("value", "none")
        value = None if raw == "none" else float(raw)
        kept = with_limit(sessions.get(session_id).metadata, scope, measure, value)
        await sessions.set_metadata(session_id, BUDGET_KEY, kept)
    if parts.budgets is not None:  # an open question over the old limit is withdrawn
        parts.budgets.limits_changed(session_id)
    metadata = sessions.get(session_id).metadata
    spent = await spend_of(parts.archive, session_id)
    return budget_text(
        effective_limits(parts.settings.budgets, metadata),
        tokens=spent.tokens,
        cost_usd=spent.cost_usd,
        unpriced=spent.unpriced,
        off=is_off(metadata),
        pipelines=await pipelines_of(parts.archive, session_id),
    )


def install_budgets(parts: EngineParts) -> BudgetWork:
    """The budget check before every model call of the engine's turns."""
    work = BudgetWork(parts)
    parts.turns.before_model_call = work.guard.check
    parts.budgets = work.guard
    return work


class _HasParts(Protocol):
    _parts: EngineParts


async def budget_verb(engine: _HasParts, session_id: str, args: dict[str, str]) -> str:
    """``Engine.budget_command``: :func:`budget_command` on the engine's parts."""
    return await budget_command(engine._parts, session_id, args)
