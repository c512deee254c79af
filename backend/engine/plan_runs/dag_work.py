"""Approved plans run: the Orchestrator's scheduler wired into the engine.

An approval (:class:`~backend.events.PlanApproved`, ``orchestrator.dag.execute``)
moves the session's phase to execution, naming the approval, and runs the plan's DAG
in a task the engine owns (:class:`~backend.orchestration.DagScheduler`; each node
through :class:`~backend.engine.plan_runs.dag_nodes.NodeRunner`, as a request to its agent).
Every node transition is published as a :class:`~backend.events.DagStatusChanged`
and written to the transcript as a short notice; at the end the phase moves on to
inspection, or back to planning when a node failed or the DAG was cancelled.

Persistence, so a restart resumes instead of redoing: node records go to a SQLite
file in the data dir (``dags.db``, 0600; :class:`SqliteDagStateStore`); which DAGs a
session has and whether each is still running is kept in the session's metadata
(``dags``). :meth:`DagWork.resume_dags` runs again every DAG that was running when the
process stopped (active and background sessions); passed nodes are not run again, nodes
that were running have their files put back first (:mod:`backend.engine.plan_runs.task_rollback`).
Shutdown leaves runs "running" for that; a user's cancel ends them. One DAG per session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from backend.engine.plan_runs.dag_nodes import (
    AskAgent,
    DagBusyError,
    DagNotFoundError,
    DagNotRunningError,
    EngineerPipelines,
    NodeRunner,
    PlanNotApprovedError,
)
from backend.engine.plan_runs.dag_notes import dag_end_note, node_note
from backend.engine.plan_runs.dag_status import RUNNING, DagBook, DagRun, now_iso
from backend.engine.session_service import SessionService
from backend.errors import SylkError
from backend.events import (
    DagStatusChanged,
    EngineEvent,
    EventStream,
    PlanApproved,
    QuestionAsked,
    QuestionSettled,
)
from backend.orchestration import (
    DagOutcome,
    DagScheduler,
    DagStatus,
    NodeEvent,
    NodeStatus,
    Slots,
    SqliteDagStateStore,
)
from backend.pipelines.context import MAX_LOOPS
from backend.plans import PlanNode
from backend.plans.desk import PlanDesk
from backend.plans.review import PlanStatus
from backend.sessions.models import SessionState
from backend.sessions.phases import PHASE_TRANSITIONS, SessionPhase
from backend.skills.builtin.orchestrator import orchestrator_ops
from backend.skills.gateway.gateway import Gateway

log = logging.getLogger(__name__)
RESUMED_STATES = (SessionState.ACTIVE, SessionState.SUSPENDED)  # a plan runs in the background


class AfterPassed(Protocol):
    """What follows a passed DAG (the session's QA, :mod:`backend.team.session_qa`)."""

    def after_plan(self, session_id: str, plan_id: str) -> None: ...
    def resume(self, session_id: str) -> bool: ...
    async def aclose(self) -> None: ...


class RemotePipelines(EngineerPipelines, Protocol):
    """Engineer nodes run outside this process (``backend.cluster``), closed with the engine."""

    async def aclose(self) -> None: ...


class DagWork:
    def __init__(
        self,
        *,
        sessions: SessionService,
        desk: PlanDesk,
        events: EventStream,
        ask: AskAgent,
        cancel_turns: Callable[[str], bool],
        state_path: Path,
        slots: Slots | None = None,
        run_on_approval: bool = True,
        pipelines: EngineerPipelines | None = None,
    ) -> None:
        self._sessions = sessions
        self._desk = desk
        self._events = events
        self._ask = ask
        self._cancel_turns = cancel_turns
        self._store = SqliteDagStateStore(state_path)
        self._book = DagBook(sessions, desk, self._store)
        self._slots = slots
        self._pipelines = pipelines  # engineer nodes as pipelines (None: one turn)
        # Engineer nodes run elsewhere (backend.cluster: on Ray workers); None: here.
        self.remote_pipelines: RemotePipelines | None = None
        self._runs: dict[str, DagRun] = {}  # by session id
        self._starting: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._closed = False
        self.after_passed: AfterPassed | None = None  # set by backend.engine.team_work
        # A run that broke, not by its tasks (session, plan, error): set by the lifecycle
        # verbs (backend.engine.lifecycle.unrecoverable), which fail the session.
        self.on_broken: Callable[[str, str, str], Awaitable[None]] | None = None
        # (session, plan, nodes a dead process left running): their files put back first
        self.before_rerun: Callable[[str, str, list[str]], Awaitable[None]] | None = None
        self._detach = (
            events.add_listener(self._on_engine_event) if run_on_approval else lambda: None
        )
        self._held: dict[str, DagRun] = {}  # question id -> the run whose clock it stopped
        self._detach_questions = events.add_listener(self._on_question)

    # -- starting --------------------------------------------------------------------
    def _on_engine_event(self, event: EngineEvent) -> None:
        """An approval starts its plan's DAG (in a task: listeners are synchronous)."""
        if not isinstance(event, PlanApproved) or self._closed or event.session_id is None:
            return
        task = asyncio.get_running_loop().create_task(
            self._start_approved(event.session_id, event.plan_id), name=f"dag-{event.plan_id}"
        )
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    def _on_question(self, event: EngineEvent) -> None:
        """While the user is asked something in a session, its DAG's time limits stop:
        an approval or a budget answered after minutes never times the task out."""
        if isinstance(event, QuestionAsked) and event.session_id in self._runs:
            run = self._held[event.question_id] = self._runs[event.session_id]
            run.scheduler.pause_clock()
        elif isinstance(event, QuestionSettled) and event.question_id in self._held:
            self._held.pop(event.question_id).scheduler.resume_clock()

    async def _start_approved(self, session_id: str, plan_id: str) -> None:
        try:
            await self.execute(session_id, plan_id)
        except SylkError as exc:
            await self._sessions.notice(session_id, f"Plan {plan_id} did not start: {exc}",
                                        error=type(exc).__name__)  # fmt: skip

    async def execute(self, session_id: str, plan_id: str) -> dict[str, Any]:
        """Run the newest version of an approved plan (resuming what ran of it before)."""
        async with self._lock:
            if self._closed:
                raise DagNotRunningError(plan_id)
            running = self._runs.get(session_id)
            if running is not None:
                if running.plan_id == plan_id:
                    return await self._summary(running.session_id, plan_id)
                raise DagBusyError(running.plan_id, plan_id)
            stored = await self._desk.latest(session_id, plan_id)
            if stored.status != PlanStatus.APPROVED:
                raise PlanNotApprovedError(plan_id, stored.version, stored.status)
            plan = self._desk.check(session_id, stored.document)
            await self._enter_execution(session_id, plan_id, stored.version)
            dag_id = self.dag_id(session_id, plan_id, stored.version)
            # Killed mid-way (left running) or stopped by the user (cancelled): such a task
            # restarts clean, its interrupted attempt's edits put back first.
            cut = [n for n, r in (await self._store.load(dag_id)).items()
                   if r.status in (NodeStatus.RUNNING, NodeStatus.CANCELLED)]  # fmt: skip
            if cut and self.before_rerun is not None:
                await self.before_rerun(session_id, plan_id, cut)
            pipelines = self.remote_pipelines or self._pipelines
            runner = NodeRunner(self._ask, session_id, plan_id, self._cancel_turns, pipelines)
            held: list[DagRun] = []  # the scheduler speaks only once it runs
            scheduler = DagScheduler(
                plan, runner.run, dag_id=dag_id, store=self._store,
                on_event=lambda e: self._on_node(held[0], e), slots=self._slots, owner=session_id,
                time_limit=self._time_limit,
            )  # fmt: skip
            run = DagRun(session_id, plan_id, stored.version, scheduler,
                         agents={n.id: n.agent for n in plan.plan.nodes})  # fmt: skip
            held.append(run)
            await self._remember(session_id, plan_id, version=stored.version, dag_id=dag_id,
                                 status=RUNNING)  # fmt: skip
            self._runs[session_id] = run
            run.task = asyncio.get_running_loop().create_task(self._drive(run), name=dag_id)
            return await self._summary(session_id, plan_id)

    def _time_limit(self, node: PlanNode) -> float:
        """An attempt's seconds: the node's ``timeout_ms``; an engineer node run as a
        pipeline gets it for each of its loops (a turn and its checks), not for all three."""
        seconds = node.metadata.timeout_ms / 1000
        if node.agent == "engineer" and self._pipelines is not None:
            return seconds * MAX_LOOPS
        return seconds

    async def resume_dags(self) -> list[tuple[str, str]]:
        """Run again every DAG of an active or suspended session that was running when Sylk
        stopped; with none, the session's QA if it was in flight (``after_passed.resume``)."""
        resumed: list[tuple[str, str]] = []
        for session in self._sessions.list_sessions():
            if session.state not in RESUMED_STATES or session.id in self._runs:
                continue
            for plan_id in self._book.running_plans(session):
                try:
                    await self.execute(session.id, plan_id)
                except SylkError as exc:
                    log.warning("DAG of plan %s did not resume: %s", plan_id, exc)
                    await self._sessions.notice(session.id, f"Plan {plan_id} did not resume: "
                                                f"{exc}", error=type(exc).__name__)  # fmt: skip
                    await self._remember(session.id, plan_id, status="failed")
                    continue
                resumed.append((session.id, plan_id))
                break  # one DAG per session
            else:  # no DAG to resume: the session's QA, if one was in flight
                if self.after_passed is not None:
                    self.after_passed.resume(session.id)
        return resumed

    # -- the run ---------------------------------------------------------------------
    async def _drive(self, run: DagRun) -> DagOutcome | None:
        writer = asyncio.get_running_loop().create_task(self._write_notes(run))
        self._publish_dag(run, RUNNING)
        try:
            outcome = await run.scheduler.run()
        except asyncio.CancelledError:  # the engine shuts down: the DAG resumes at restart
            writer.cancel()
            self._runs.pop(run.session_id, None)
            raise
        except Exception as exc:  # a broken store or scheduler: the run ends, failed
            log.exception("DAG %s broke", run.dag_id)
            outcome = None
            error: str | None = f"{type(exc).__name__}: {exc}"
        else:
            error = None
        run.notes.put_nowait(None)
        await writer
        status = outcome.status if outcome is not None else DagStatus.FAILED
        await self._finish(run, status, outcome, error)
        if error is not None and self.on_broken is not None:
            await self.on_broken(run.session_id, run.plan_id, error)
        return outcome

    async def _finish(
        self, run: DagRun, status: DagStatus, outcome: DagOutcome | None, error: str | None
    ) -> None:
        sid = run.session_id
        try:
            await self._remember(sid, run.plan_id, status=status.value, ended_at=now_iso())
            text, extra = dag_end_note(run.plan_id, status, outcome, error)
            await self._sessions.notice(sid, text, **extra)
            if status is DagStatus.PASSED:
                await self._move(sid, SessionPhase.INSPECTION, f"plan {run.plan_id}: every "
                                 "task passed; its work goes to inspection")  # fmt: skip
            else:
                await self._move(sid, SessionPhase.PLANNING, f"plan {run.plan_id}: the DAG "
                                 f"{status.value}; back to the Architect")  # fmt: skip
        finally:
            self._runs.pop(sid, None)
            self._publish_dag(run, status.value, error=error)
        if status is DagStatus.PASSED and self.after_passed is not None:
            self.after_passed.after_plan(sid, run.plan_id)

    def _on_node(self, run: DagRun, event: NodeEvent) -> None:
        if event.status is NodeStatus.RUNNING:
            run.started[event.node_id] = time.monotonic()
        agent = run.agents.get(event.node_id)
        self._events.publish(DagStatusChanged(
            session_id=run.session_id, plan_id=run.plan_id, version=run.version,
            dag_id=event.dag_id, status=event.status.value, node_id=event.node_id, agent=agent,
            attempt=event.attempt, max_attempts=event.max_attempts, duration_s=event.duration_s,
            error=event.error, delay_s=event.delay_s, resumed=event.resumed,
        ))  # fmt: skip
        note = node_note(run.plan_id, agent or "?", event)
        if note is not None:
            run.notes.put_nowait(note)

    async def _write_notes(self, run: DagRun) -> None:
        """The transcript's notices, in the order of the transitions."""
        while (note := await run.notes.get()) is not None:
            text, extra = note
            try:
                await self._sessions.notice(run.session_id, text, **extra)
            except SylkError:
                log.exception("DAG %s: a notice was not recorded", run.dag_id)

    def _publish_dag(self, run: DagRun, status: str, *, error: str | None = None) -> None:
        self._events.publish(DagStatusChanged(
            session_id=run.session_id, plan_id=run.plan_id, version=run.version,
            dag_id=run.dag_id, status=status, error=error,
        ))  # fmt: skip

    # -- the phase and the record ------------------------------------------------------
    async def _enter_execution(self, session_id: str, plan_id: str, version: int) -> None:
        phase = self._sessions.get(session_id).phase
        if phase is SessionPhase.EXECUTION:
            return
        if SessionPhase.EXECUTION not in PHASE_TRANSITIONS[phase]:
            await self._sessions.set_phase(session_id, SessionPhase.PLANNING,
                                           f"plan {plan_id} v{version} was proposed")  # fmt: skip
        await self._sessions.set_phase(
            session_id, SessionPhase.EXECUTION, f"plan {plan_id} v{version} approved: its "
            "DAG runs", approval=f"plan {plan_id} v{version}",
        )  # fmt: skip

    async def _move(self, session_id: str, phase: SessionPhase, reason: str) -> None:
        try:
            await self._sessions.set_phase(session_id, phase, reason)
        except SylkError as exc:  # moved by hand meanwhile: say so, keep going
            log.warning("session %s: phase not moved to %s: %s", session_id, phase, exc)

    async def _remember(self, session_id: str, plan_id: str, **entry: Any) -> None:
        await self._book.remember(session_id, plan_id, **entry)

    # -- reading and stopping ------------------------------------------------------------
    async def status(self, session_id: str, plan_id: str | None = None) -> list[dict[str, Any]]:
        """Each DAG of the session (or the one of ``plan_id``): its nodes' state."""
        return await self._book.status(session_id, plan_id, self._runs.get(session_id))

    async def _summary(self, session_id: str, plan_id: str) -> dict[str, Any]:
        return await self._book.summary(session_id, plan_id, self._runs.get(session_id))

    @property
    def pipelines(self) -> EngineerPipelines | None:
        return self._pipelines  # what runs engineer nodes (the engine's PipelineWork)

    def dag_id(self, session_id: str, plan_id: str, version: int) -> str:
        """Where one plan version's node records are kept (``store``)."""
        return f"{session_id}/{plan_id}/v{version}"

    @property
    def store(self) -> SqliteDagStateStore:
        return self._store  # a revision carries passed records over (backend.team.phase_talk)

    def running(self, session_id: str) -> str | None:
        """The plan whose DAG runs in the session now, if one does."""
        run = self._runs.get(session_id)
        return run.plan_id if run is not None else None

    async def wait(self, session_id: str, plan_id: str) -> DagOutcome | None:
        """Until the plan's running DAG ends (at once if none runs); its outcome."""
        if self._starting:  # an approval just published: its DAG is being started
            await asyncio.gather(*self._starting, return_exceptions=True)
        run = self._runs.get(session_id)
        if run is None or run.plan_id != plan_id or run.task is None:
            return None
        return await asyncio.shield(run.task)

    async def cancel(self, session_id: str, plan_id: str) -> dict[str, Any]:
        """Stop the plan's running DAG: its nodes are cancelled, the phase goes back to planning."""
        run = self._runs.get(session_id)
        if run is None or run.plan_id != plan_id or run.task is None:
            if plan_id not in self._book.entries(session_id):
                raise DagNotFoundError(f"plan {plan_id!r}")
            raise DagNotRunningError(plan_id)
        run.scheduler.cancel()
        self._cancel_turns(session_id)
        await asyncio.shield(run.task)
        return await self._summary(session_id, plan_id)

    async def aclose(self) -> None:
        """Stop every run (they resume at the next start) and close the state file."""
        self._closed = True
        self._detach()
        self._detach_questions()
        if self.after_passed is not None:
            await self.after_passed.aclose()
        tasks = [*self._starting, *(r.task for r in self._runs.values() if r.task is not None)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.remote_pipelines is not None:
            await self.remote_pipelines.aclose()
        await self._store.aclose()


def install_orchestration(gateway: Gateway, dags: DagWork) -> None:
    """Replace the Orchestrator's placeholder ops with ones that run DAGs for real."""
    for skill in orchestrator_ops(dags):
        gateway.registry.unregister(skill.op)
        gateway.registry.register(skill)
