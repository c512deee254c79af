"""The Orchestrator's ops, for real: run an approved plan's DAG, see it, stop it.

The engine's DAG work (``backend.engine.plan_runs.dag_work``) does the running; these ops reach
it through :class:`DagOps`, the same calls the engine makes when a plan is approved.
``orchestrator.task.dispatch`` exists because the seed names it, but the scheduler
starts every task itself the moment its dependencies passed: dispatching a task of a
running DAG says where it stands; a task of a DAG that stopped (failed, cancelled)
runs again by resuming that DAG, and tasks that passed are not run again.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import Field

from backend.skills.builtin.declare import CORE, WRITE, Params, declare
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Skill, SkillContext, SkillResult

AGENT = "orchestrator"


class DagOps(Protocol):
    """What the ops need from the engine (``DagWork`` provides it)."""

    async def execute(self, session_id: str, plan_id: str) -> dict[str, Any]: ...

    async def status(self, session_id: str, plan_id: str | None = None) -> list[dict[str, Any]]: ...

    async def cancel(self, session_id: str, plan_id: str) -> dict[str, Any]: ...

    def running(self, session_id: str) -> str | None: ...


class PlanRef(Params):
    plan_id: str = Field(min_length=1, max_length=128)


class StatusParams(Params):
    plan_id: str | None = Field(default=None, min_length=1, max_length=128,
                                description="omit for every DAG of the session")  # fmt: skip


class DispatchParams(Params):
    task_id: str = Field(min_length=1, max_length=128, description="a node id of the plan")
    plan_id: str | None = Field(default=None, min_length=1, max_length=128,
                                description="omit for the DAG running now, else the newest "
                                "DAG holding the task")  # fmt: skip


def _holding(dags: list[dict[str, Any]], task_id: str) -> dict[str, Any] | None:
    for dag in reversed(dags):  # the newest first
        if any(node["id"] == task_id for node in dag["nodes"]):
            found: dict[str, Any] = dag
            return found
    return None


def orchestrator_ops(dags: DagOps) -> list[Skill]:
    async def execute(ctx: SkillContext, p: PlanRef) -> SkillResult:
        dag = await dags.execute(ctx.session_id, p.plan_id)
        return SkillResult(result=dag | {"next": "orchestrator.dag.status follows it; "
                                         "orchestrator.dag.cancel stops it"})  # fmt: skip

    async def status(ctx: SkillContext, p: StatusParams) -> SkillResult:
        found = await dags.status(ctx.session_id, p.plan_id)
        return SkillResult(result={"running": dags.running(ctx.session_id), "dags": found})

    async def cancel(ctx: SkillContext, p: PlanRef) -> SkillResult:
        return SkillResult(result=await dags.cancel(ctx.session_id, p.plan_id))

    async def dispatch(ctx: SkillContext, p: DispatchParams) -> SkillResult:
        plan_id = p.plan_id or dags.running(ctx.session_id)
        found = await dags.status(ctx.session_id, plan_id)
        dag = _holding(found, p.task_id)
        if dag is None:
            raise SkillError(ErrorCode.NOT_FOUND, f"no DAG of this session has a task "
                             f"{p.task_id!r}", details={"reason": "task_not_found"},
                             help_path="orchestrator.dag.status")  # fmt: skip
        [node] = [n for n in dag["nodes"] if n["id"] == p.task_id]
        if dags.running(ctx.session_id) == dag["plan_id"]:
            return SkillResult(result={"plan_id": dag["plan_id"], "task": node, "dispatched":
                               False, "next": "the DAG runs: the task starts by itself once "
                               "its dependencies passed"})  # fmt: skip
        if node["status"] == "passed":
            return SkillResult(result={"plan_id": dag["plan_id"], "task": node, "dispatched":
                               False, "next": "the task passed already"})  # fmt: skip
        again = await dags.execute(ctx.session_id, dag["plan_id"])
        return SkillResult(result={"plan_id": dag["plan_id"], "task": node, "dispatched": True,
                                   "dag": again})  # fmt: skip

    return [
        declare("orchestrator.dag.execute", AGENT, "Run an approved plan's task DAG: tasks "
                "as agent requests, in dependency order, with retries; resumes a stopped "
                "run without redoing passed tasks.", PlanRef, execute, tier=CORE, kind=WRITE,
                entry_point=True, tags=("execute", "run", "dag", "workflow"),
                examples=[("run plan", {"plan_id": "p1"})],
                guidance=[("orchestrator.dag.status", "Follow the DAG's tasks")]),
        declare("orchestrator.dag.status", AGENT, "Status of a plan's DAG: each task's state "
                "(pending, running, passed, failed, skipped, cancelled), attempts and "
                "duration.", StatusParams, status, tier=CORE,
                tags=("status", "progress", "dag", "tasks"),
                examples=[("status of plan", {"plan_id": "p1"})]),
        declare("orchestrator.task.dispatch", AGENT, "Dispatch a task of a plan: one of a "
                "stopped DAG runs again (with what it still needs); one of the running DAG "
                "starts by itself.", DispatchParams, dispatch, kind=WRITE, searchable=False,
                tags=("dispatch", "assign", "task"),
                examples=[("dispatch", {"task_id": "t1"})]),
        declare("orchestrator.dag.cancel", AGENT, "Cancel a running DAG: its running tasks "
                "stop, the rest never start; the work goes back to planning.", PlanRef,
                cancel, kind=WRITE, destructive=True, tags=("cancel", "abort", "dag"),
                examples=[("cancel", {"plan_id": "p1"})]),
    ]  # fmt: skip
