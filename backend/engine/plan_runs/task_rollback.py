"""A plan's task killed mid-way restarts clean: its edits are written down as they happen
and put back when its DAG resumes (:mod:`backend.checkpoints.task_ledger`).

Two tool hooks on the gateway, for the edits and writes of a turn that belongs to a
plan's task (:data:`~backend.checkpoints.task_ledger.TASK_TAG`, set by
:class:`~backend.engine.plan_runs.pipeline_work.PipelineWork` around its engineer turns and
carried to the turn by the dispatcher): before the edit lands (after the approval gate
and the checkpoint hook, so the turn's "before" snapshot exists) the path and that
snapshot; after it, the file's content id. When :class:`~backend.engine.plan_runs.dag_work.DagWork`
resumes a DAG whose records say a node was running, :func:`roll_back_nodes` puts those
nodes' files back before the scheduler runs them again, and says so in the transcript.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from backend.agents.tool_actions import EDIT_OPS
from backend.checkpoints.service import Checkpoints, current_turn
from backend.checkpoints.task_ledger import (
    TASK_TAG,
    RolledBack,
    TaskLedger,
    current_oid,
    roll_back_task,
    task_key,
)
from backend.engine.plan_runs.pipeline_work import PipelineWork
from backend.errors import SylkError
from backend.skills.hooks.registry import Hook, HookKind, HookPriority, ToolCallData

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger(__name__)
LEDGER_FILE = "task_edits.db"


def workspace_path(raw: object, workspace: Path) -> str | None:
    """The workspace-relative path an edit names (None: not one inside the workspace)."""
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw)
    if path.is_absolute():
        try:
            path = path.relative_to(workspace)
        except ValueError:
            return None
    parts = [p for p in PurePosixPath(path.as_posix()).parts if p != "."]
    return None if not parts or ".." in parts else "/".join(parts)


def _edit_of_task(data: ToolCallData) -> tuple[str, str] | None:
    """(task, path) when this call is a real edit made by a plan's task's turn."""
    tag = TASK_TAG.get()
    if tag is None or data.dry_run or data.skill.op not in EDIT_OPS:
        return None
    path = workspace_path(data.args.get("path"), data.ctx.workspace)
    return None if path is None else (tag, path)


def ledger_hooks(ledger: TaskLedger) -> list[Hook]:
    async def before_edit(data: ToolCallData) -> None:
        found = _edit_of_task(data)
        if found is None:
            return
        turn = current_turn()
        base = turn.before.tree if turn is not None and turn.before is not None else None
        try:
            await ledger.touching(data.ctx.session_id, *found, base)
        except (sqlite3.Error, OSError) as exc:
            data.warnings.append(f"this edit is not recorded for a resume: {exc}")

    async def after_edit(data: ToolCallData) -> None:
        found = _edit_of_task(data)
        if found is None:
            return
        workspace = data.ctx.workspace.resolve()
        # The edit op confined the path; the file is read again without following a link.
        oid = await asyncio.to_thread(current_oid, workspace, found[1])
        await ledger.touched(data.ctx.session_id, *found, oid)

    after_checkpoint = HookPriority.LAST + 20  # after the gate and the checkpoint hook
    return [
        Hook("task_edit_before", HookKind.PRE_TOOL, before_edit, after_checkpoint),
        Hook("task_edit_after", HookKind.POST_TOOL, after_edit, HookPriority.FIRST),
    ]


def rollback_note(plan_id: str, node_id: str, done: RolledBack) -> str | None:
    """The transcript's word on it (None: the attempt had changed nothing left to undo)."""
    said = []
    if done.restored:
        said.append("restored " + ", ".join(done.restored))
    if done.removed:
        said.append("removed " + ", ".join(done.removed) + " (it had created them)")
    if done.kept:
        said.append("left as they are, changed since by someone else: " + ", ".join(done.kept))
    if done.unknown:
        said.append("not rolled back (no checkpoint of them): " + ", ".join(done.unknown))
    if not said:
        return None
    head = "its interrupted attempt's changes were rolled back" if done.changed else (
        "its interrupted attempt's changes were not rolled back")  # fmt: skip
    return f"Plan {plan_id}, task {node_id}: {head} before it runs again: " + "; ".join(said)


class TaskRollback:
    """``DagWork.before_rerun``: the running nodes of a resuming DAG, put back."""

    def __init__(self, parts: EngineParts, ledger: TaskLedger) -> None:
        self._parts = parts
        self.ledger = ledger

    async def __call__(self, session_id: str, plan_id: str, nodes: list[str]) -> None:
        sessions = self._parts.sessions
        workspace = Path(sessions.get(session_id).workspace)
        checkpoints: Checkpoints = self._parts.checkpoints
        for node_id in nodes:
            key = task_key(plan_id, node_id)
            try:
                done = await roll_back_task(checkpoints, self.ledger, session_id, key, workspace)
            except (SylkError, OSError, sqlite3.Error) as exc:
                log.warning("task %s: not rolled back: %s", key, exc)
                text = (f"Plan {plan_id}, task {node_id}: its interrupted attempt's changes "
                        f"could not be rolled back ({exc}); it runs again on the files as "
                        "they are")  # fmt: skip
                await sessions.notice(session_id, text, dag=plan_id, node=node_id,
                                      rollback="failed", level="warning")  # fmt: skip
                continue
            note = rollback_note(plan_id, node_id, done)
            if note is not None:
                await sessions.notice(session_id, note, dag=plan_id, node=node_id,
                                      rollback=done.changed, restored=done.restored,
                                      removed=done.removed, kept=done.kept)  # fmt: skip


def install_task_rollback(parts: EngineParts) -> TaskRollback:
    """The ledger, its hooks, and the roll-back that resuming DAGs call first."""
    ledger = TaskLedger(parts.config.data_dir / LEDGER_FILE)
    for hook in ledger_hooks(ledger):
        parts.gateway.hooks.install(hook)
    rollback = TaskRollback(parts, ledger)
    parts.dags.before_rerun = rollback
    if isinstance(parts.dags.pipelines, PipelineWork):
        parts.dags.pipelines.ledger = ledger
    return rollback
