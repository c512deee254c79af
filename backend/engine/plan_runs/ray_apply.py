"""A Ray result applied on the driver is a turn of the session's engineer, as local edits are.

A local engineer turn's edits are snapshotted by the checkpoints (``/diff`` lists them,
``/undo`` puts them back, session QA inspects them) and written down in the task ledger
before they land (a resumed DAG's roll-back puts them back). The edits of a pipeline
run on a Ray worker reach the workspace in one ``git apply`` on the driver: that apply
is wrapped the same way, a checkpoint turn of role ``engineer`` around it and the
ledger's rows for the node's task written first. So a result is exactly as visible,
and as undoable, as the same edits made in process.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from backend.checkpoints.task_ledger import TaskLedger, current_oid
from backend.engine.plan_runs.pipeline_work import PipelineWork
from backend.errors import SylkError

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger(__name__)
ROLE = "engineer"  # whose turn a result is (what ``/undo`` names)


def task_ledger(parts: EngineParts) -> TaskLedger | None:
    """The engine's task ledger (None: the engine keeps none)."""
    pipelines = parts.dags.pipelines
    return pipelines.ledger if isinstance(pipelines, PipelineWork) else None


async def apply_as_turn(
    parts: EngineParts, session_id: str, tag: str, files: list[str],
    apply: Callable[[], Awaitable[None]],
) -> None:  # fmt: skip
    """Run ``apply`` as a checkpointed engineer turn of the session, ``files`` (workspace
    paths it changes) in the ledger for task ``tag`` (``plan/node``) before and after it
    lands. A checkpoint or ledger that fails warns and the result still lands, as a local
    edit does."""
    workspace = Path(parts.sessions.get(session_id).workspace)
    root = await asyncio.to_thread(workspace.resolve)
    ledger = task_ledger(parts)
    async with parts.checkpoints.turn(session_id, ROLE, workspace) as turn:
        turn.turn_id = f"ray:{tag}"
        try:
            await turn.before_change()
        except (SylkError, OSError) as exc:
            log.warning("no checkpoint for task %s's result (cannot undo it): %s", tag, exc)
        base = turn.before.tree if turn.before is not None else None
        if ledger is not None:
            await _noted(ledger.begin(session_id, tag))
            for path in files:
                await _noted(ledger.touching(session_id, tag, path, base))
        try:
            await apply()
        except BaseException:  # nothing was written: no edit in flight to put back later
            if ledger is not None:
                await _noted(ledger.forget(session_id, tag))
            raise
        if ledger is not None:
            for path in files:
                oid = await asyncio.to_thread(current_oid, root, path)
                await _noted(ledger.touched(session_id, tag, path, oid))


async def rolled_back(parts: EngineParts, session_id: str, tag: str) -> bool:
    """The ledger no longer holds task ``tag``'s applied files: a resumed DAG's roll-back
    put them back (it forgets what it restored), so its result is to be applied again."""
    ledger = task_ledger(parts)
    if ledger is None:
        return False
    try:
        return not await asyncio.to_thread(ledger.files, session_id, tag)
    except sqlite3.Error:
        return False


async def _noted(write: Awaitable[None]) -> None:
    """One ledger write; a failing one warns (the result lands without a resume record)."""
    try:
        await write
    except (sqlite3.Error, OSError) as exc:
        log.warning("the task ledger did not record a ray result: %s", exc)
