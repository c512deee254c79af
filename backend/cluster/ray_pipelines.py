"""Engineer nodes run on a Ray cluster: the driver's half (``EngineerPipelines``).

For each engineer node the driver snapshots the session's working tree to a base ref,
sends a Ray task (:func:`backend.cluster.worker_pipeline.run_job`) that runs the whole
pipeline in a checkout of that base on some worker, republishes the worker's notices on
the session's event stream as they come (through one Ray queue per driver), asks the
worker's questions on the driver's board (``question_relay``: an approval in ``ask`` mode
reaches the user's inbox, the answer goes back), and once the task returns applies
base..result to the working tree exactly once: a ref ``refs/sylk/applied/<plan>/<node>-
<key>`` records the application, so a retry, a duplicate result or a restart never
applies it again (the node passes with the output the result commit carries). The
worker's model usage is recorded in the driver's archive. The apply is a turn of the
session's engineer as a local edit is (the driver side wraps it: a checkpoint for
``/diff``, ``/undo`` and session QA, the task ledger's rows for a resumed DAG's roll-back;
a result so rolled back lands again from its ref, still without a second run).

A worker that dies mid-pipeline is a failed attempt the scheduler retries (or Ray, with
``max_retries``); its edits lived only in its checkout and were never pushed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from backend.checkpoints.task_ledger import task_key
from backend.cluster.errors import ApplyConflictError
from backend.cluster.git_handoff import (
    SessionRepository,
    apply_result,
    changed_files,
    commit_message,
    count_refs,
    holds_result,
    node_key,
    node_ref_part,
    ref_sha,
    session_repository,
    snapshot_base,
)
from backend.cluster.pipeline_history import PipelineHistory
from backend.cluster.question_relay import ASK, DriverQuestions
from backend.cluster.ray_connection import RayConnector
from backend.cluster.worker_pipeline import Body, WorkerJob, WorkerOutcome, run_job, sylk_env
from backend.config.orchestration import OrchestrationSettings
from backend.errors import SylkError
from backend.events import ChoiceQuestion, EngineNotice, EventStream, PipelineMoved
from backend.orchestration import NodeResult
from backend.plans import PlanNode

log = logging.getLogger(__name__)
Listener = Callable[[int, str, Any], None]
OUTPUT_MAX = 20_000  # characters of a node's output kept for its dependants (as locally)


class DriverSide(Protocol):
    """What the driver's engine lends the cluster (``backend.engine.plan_runs.ray_work``)."""

    events: EventStream
    body: Body

    def workspace(self, session_id: str) -> Path: ...
    async def ask(self, question: ChoiceQuestion, session_id: str) -> str | None:
        """A worker's question put to the user in ``session_id`` (the driver's board)."""

    def engine_fields(self, session_id: str) -> dict[str, Any]: ...
    async def record_usage(self, session_id: str, rows: list[dict[str, Any]]) -> None: ...
    async def record_history(self, session_id: str, history: PipelineHistory) -> int:
        """An attempt's history stored under ``session_id`` once (0: stored before)."""

    async def applying(
        self, session_id: str, task: str, files: list[str], apply: Callable[[], Awaitable[None]]
    ) -> None:
        """``apply`` (changing workspace ``files``) as a turn of the session: checkpointed
        (``/diff``, ``/undo``, session QA) and in the task ledger under ``task``."""

    async def rolled_back(self, session_id: str, task: str) -> bool:
        """A resumed DAG's roll-back put ``task``'s applied result back since."""


@dataclass(frozen=True)
class Landing:
    """Where and as what a node's result lands: the repository, the session, the task
    (``plan/node``: its ledger rows) and the ref that records it landed."""

    repo: SessionRepository
    session_id: str
    task: str
    applied_ref: str


class RayPipelines:
    """Runs engineer nodes as pipelines on Ray workers (``DagWork``'s ``pipelines``)."""

    def __init__(self, side: DriverSide, settings: OrchestrationSettings) -> None:
        self._side = side
        self._settings = settings
        self._connector = RayConnector(settings)
        self._questions = DriverQuestions(side.ask)
        self._events = side.events
        self._listeners: dict[str, Listener] = {}
        self._queue: Any = None
        self._pump: asyncio.Task[None] | None = None
        self._remote: Any = None
        self._applying: dict[str, asyncio.Lock] = {}
        self._attempts: dict[str, int] = {}  # node key -> the last attempt sent

    async def run(
        self, ask: Any, session_id: str, plan_id: str, node: PlanNode,
        upstream: Mapping[str, Any],
    ) -> NodeResult:  # fmt: skip
        try:
            return await self._run(session_id, plan_id, node, upstream)
        except SylkError as error:  # typed: the node fails saying why, never a traceback
            # The user changed the same lines meanwhile: theirs to decide, never rerun over.
            retry = not isinstance(error, ApplyConflictError)
            return NodeResult.failed(error.message, retryable=retry)

    async def _run(
        self, session_id: str, plan_id: str, node: PlanNode, upstream: Mapping[str, Any]
    ) -> NodeResult:
        side = self._side
        repo = session_repository(side.workspace(session_id))
        where = node_ref_part(plan_id, node.id)
        key = node_key(session_id, plan_id, node.model_dump_json())
        applied_ref = f"refs/sylk/applied/{where}-{key}"
        task = task_key(plan_id, node.id)
        if (done := await ref_sha(repo, applied_ref)) is not None:  # applied before a restart
            await self._again_if_rolled_back(Landing(repo, session_id, task, applied_ref), done)
            return NodeResult.passed((await commit_message(repo, done)).strip()[:OUTPUT_MAX])
        ray = await self._connected()
        base_ref = f"refs/sylk/base/{where}"
        base = await snapshot_base(repo, base_ref)
        # Numbered in this process too: a dead attempt pushed no ref to count.
        attempt = max(await count_refs(repo, f"refs/sylk/results/{where}/"),
                      self._attempts.get(key, 0)) + 1  # fmt: skip
        self._attempts[key] = attempt
        while await ref_sha(repo, f"refs/sylk/results/{where}/{attempt}") is not None:
            attempt += 1
        job = WorkerJob(
            run_key=f"{key}/{attempt}/{os.getpid()}", session_id=session_id, plan_id=plan_id,
            node=node, upstream=dict(upstream), repository=str(repo.root), subdir=repo.subdir,
            base_ref=base_ref, result_ref=f"refs/sylk/results/{where}/{attempt}",
            body=side.body, engine=side.engine_fields(session_id), env=sylk_env(os.environ),
        )  # fmt: skip
        self._listeners[job.run_key] = self._republish(job.run_key, session_id, plan_id, node.id)
        sent = time.perf_counter()
        ref = self._remote.remote(job, self._queue)
        try:
            outcome: WorkerOutcome = await ref
        except asyncio.CancelledError:  # timed out or cancelled: the worker stops too
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
            raise
        except Exception as exc:  # the worker died, or the task raised
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            return NodeResult.failed(f"the ray worker's task failed: {type(exc).__name__}: {first}")
        finally:
            self._listeners.pop(job.run_key, None)
            await self._questions.finished(job.run_key)
        log.debug("ray pipeline %s/%s on %s: %.1f ms in all, %s", plan_id, node.id,
                  outcome.worker[:12], (time.perf_counter() - sent) * 1000,
                  outcome.phases_ms)  # fmt: skip
        await self._record_usage(session_id, outcome)
        await self._record_history(session_id, outcome)
        if not outcome.ok or outcome.result_sha is None:
            return NodeResult.failed(outcome.error or "the pipeline failed",
                                     retryable=outcome.retryable)  # fmt: skip
        lock = self._applying.setdefault(key, asyncio.Lock())
        async with lock:  # a duplicate result waits, then finds it applied
            if await ref_sha(repo, applied_ref) is None:
                landing = Landing(repo, session_id, task, applied_ref)
                await self._apply(landing, base, outcome.result_sha)
        return NodeResult.passed(outcome.output[:OUTPUT_MAX])

    async def _apply(self, landing: Landing, base: str, result: str) -> None:
        """base..result onto the working tree as a turn of the session (as a local run's
        engineer turn is recorded: ``/diff``, ``/undo``, session QA, the task ledger)."""
        repo = landing.repo
        files = repo.in_workspace(await changed_files(repo.git_dir, repo.root, base, result))

        async def apply() -> None:
            await apply_result(repo, base, result, landing.applied_ref)

        await self._side.applying(landing.session_id, landing.task, files, apply)

    async def _again_if_rolled_back(self, landing: Landing, done: str) -> None:
        """The DAG resumed with this node running: its roll-back put the applied result
        back (the ledger forgot it, the tree no longer holds it), so it lands again, once,
        without another run on the cluster. A result the tree still holds stays as it is."""
        base = f"{done}^"  # the worker committed its result on the base it was sent
        async with self._applying.setdefault(landing.applied_ref, asyncio.Lock()):
            if await self._side.rolled_back(landing.session_id, landing.task) and not (
                await holds_result(landing.repo, base, done)
            ):
                await self._apply(landing, base, done)

    async def _connected(self) -> Any:
        """Ray connected, the task declared, the event queue and its pump running."""
        ray = await self._connector.connect()
        if self._remote is None:
            from ray.util.queue import Queue

            self._remote = ray.remote(max_retries=self._settings.max_retries,
                                      num_cpus=self._settings.cpus_per_pipeline)(_task)  # fmt: skip
            self._queue = Queue(actor_options={"num_cpus": 0})
            self._pump = asyncio.get_running_loop().create_task(self._drain(), name="ray-events")
        return ray

    async def _drain(self) -> None:
        """The workers' events, to whichever run they belong to (owned; cancelled at close)."""
        from ray.util.queue import Empty

        while True:
            try:
                run_key, kind, payload, seq = await self._queue.get_async(timeout=0.5)
            except Empty:
                continue
            except Exception:  # the queue actor is gone (Ray shut down): stop quietly
                log.warning("the ray event queue stopped", exc_info=True)
                return
            if (listener := self._listeners.get(run_key)) is not None:
                listener(seq, kind, payload)

    def _republish(self, run_key: str, session_id: str, plan_id: str, node_id: str) -> Listener:
        where: list[str] = ["?"]
        held: dict[int, tuple[str, Any]] = {}  # arrived before an earlier one
        due = [0]

        def in_order(seq: int, kind: str, payload: Any) -> None:
            """The queue actor may run one worker's puts out of order: each event carries
            its number and is held until those before it came (the worker's name first)."""
            held[seq] = (kind, payload)
            while due[0] in held:
                listener(*held.pop(due[0]))
                due[0] += 1

        def listener(kind: str, payload: Any) -> None:
            if kind == "worker":
                where[0] = str(payload["worker"])[:12]
                pid = payload["pid"]
                text = f"Plan {plan_id}, task {node_id}: on ray worker {where[0]} (pid {pid})"
                self._events.publish(EngineNotice(session_id=session_id, text=text,
                                                  plan_id=plan_id, progress=True))  # fmt: skip
            elif kind == "notice":
                text, level, progress = payload
                self._events.publish(EngineNotice(
                    session_id=session_id, level=level, text=f"{text} on ray worker {where[0]}",
                    plan_id=plan_id, progress=progress,
                ))  # fmt: skip
            elif kind == "moved":
                moved = PipelineMoved.model_validate({**payload, "session_id": session_id})
                self._events.publish(moved)
            elif kind == ASK:
                self._questions.relay(run_key, session_id, payload)

        return in_order

    async def _record_usage(self, session_id: str, outcome: WorkerOutcome) -> None:
        rows = [{**row, "session_id": session_id} for row in outcome.usage]
        if rows:
            try:
                await self._side.record_usage(session_id, rows)
            except SylkError as exc:
                log.warning("the ray worker's usage was not recorded: %s", exc)

    async def _record_history(self, session_id: str, outcome: WorkerOutcome) -> None:
        """What the attempt did (transcript, steps, chronicle), failed or not, as a local
        run keeps it; a killed attempt returned nothing, so it stores nothing."""
        try:
            await self._side.record_history(session_id, outcome.history)
        except (SylkError, ValueError) as exc:  # ValueError: an envelope that did not parse
            log.warning("the ray worker's history was not recorded: %s", exc)

    async def aclose(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump


def _task(job: WorkerJob, queue: Any) -> WorkerOutcome:
    """The remote task: the worker's node id for the notices, then the pipeline."""
    import ray

    worker = ray.get_runtime_context().get_node_id()

    sent = itertools.count()
    lock = threading.Lock()

    def send(item: tuple[str, str, Any]) -> None:
        with lock:  # numbered in the order sent (the driver delivers them in that order)
            queue.actor.put_nowait.remote((*item, next(sent)))  # fire and forget

    return run_job(job, send, worker)
