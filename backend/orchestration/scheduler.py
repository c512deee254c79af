"""The Orchestrator's scheduler core: runs one validated plan's DAG, independent of agents.

Given a :class:`~backend.plans.ValidatedPlan` and ``run_node(node, upstream_outputs)
-> NodeResult``, :class:`DagScheduler` runs every node once its dependencies passed,
at most ``policy.max_concurrency`` at a time (and, with ``slots``, within a bound
shared by many DAGs), each attempt under the node's timeout, failed attempts retried
with exponential backoff, and reports every transition as a
:class:`~backend.orchestration.records.NodeEvent`.

Dependency-driven, not layer-by-layer. The seed runs ``execution_order`` one layer
at a time; here a node starts as soon as its own dependencies have passed. That is
equivalent in what a node may rely on (everything it depends on, directly or
transitively, has passed and its output is in ``upstream_outputs``), because a valid
plan's ``execution_order`` is exactly its dependency layering (see
``backend.plans.graph``), and better in time: no node waits for an unrelated slow node
of the layer before it. Ready nodes start in order of priority, then layer, then
plan order, so with spare slots it is layer order.

Failure. With ``fail_fast`` the first node that fails for good cancels the running
nodes (CANCELLED) and skips the rest (SKIPPED); without, only the nodes downstream
of a failed one are skipped and the rest run on. :meth:`DagScheduler.cancel` stops
the run the same way and it returns CANCELLED; cancelling the task awaiting
:meth:`DagScheduler.run` does too, then re-raises. Either way every node task is
awaited before ``run`` ends: none is left running or with an unretrieved exception.

Resume. With a ``store``, records are saved as nodes start and end, and a node whose
saved record says PASSED for the node as planned (same digest), with everything
upstream of it passed too, is not run again; its saved output feeds its dependants.
A node's PASSED record is saved before its dependants start.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial

from backend.orchestration.node_attempt import Deadlines, RunNode, attempt_once
from backend.orchestration.records import (
    DagOutcome,
    DagStatus,
    NodeEvent,
    NodeRecord,
    NodeStatus,
)
from backend.orchestration.slots import Slots
from backend.orchestration.state_store import DagStateStore
from backend.plans import PlanNode, ValidatedPlan

log = logging.getLogger(__name__)
_PASSED, _PENDING = NodeStatus.PASSED, NodeStatus.PENDING  # looked up per node: kept at hand

Listener = Callable[[NodeEvent], None]
Sleep = Callable[[float], Awaitable[None]]


class DagScheduler:
    """Runs one plan's DAG once; ``run`` returns how it ended."""

    def __init__(
        self,
        plan: ValidatedPlan,
        run_node: RunNode,
        *,
        dag_id: str | None = None,
        store: DagStateStore | None = None,
        on_event: Listener | None = None,
        slots: Slots | None = None,
        owner: str | None = None,
        max_concurrency: int | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        time_limit: Callable[[PlanNode], float] | None = None,
    ) -> None:
        self.plan = plan
        # Seconds an attempt of a node may take; by default its ``timeout_ms``.
        self._time_limit = time_limit or (lambda node: node.metadata.timeout_ms / 1000)
        self.dag_id = dag_id or plan.id
        self._run_node = run_node
        self._store = store
        self._on_event = on_event
        self._slots = slots
        self._owner = owner or plan.plan.session_id or self.dag_id
        self._limit = max_concurrency or plan.policy.max_concurrency
        self._sleep = sleep
        self._clock = clock
        self._records: dict[str, NodeRecord] = {}
        self._waiting: dict[str, int] = {}
        self._ready: list[tuple[int, int, int, str]] = []
        self._running: dict[str, asyncio.Task[NodeRecord]] = {}
        self._unsaved: list[str] = []  # nodes skipped or cancelled outside their own task
        self._stopping: DagStatus | None = None
        self._fatal: BaseException | None = None
        self._finished: asyncio.Future[None] | None = None
        self._deadlines: Deadlines | None = None
        self._started = False

    async def run(self) -> DagOutcome:
        """Run the DAG to its end; a store's or runner's crash is raised after cleanup."""
        if self._started:
            raise RuntimeError("a DagScheduler runs its DAG once; make a new one to resume")
        self._started = True
        self._finished = asyncio.get_running_loop().create_future()
        self._deadlines = Deadlines()
        try:
            await self._restore()
            self._fill()
            self._check_finished()
            await self._finished
        except asyncio.CancelledError:
            self._stop(DagStatus.CANCELLED)
            if self._running:
                await asyncio.wait(list(self._running.values()))
            await self._save_unsaved(quiet=True)
            raise
        finally:
            self._deadlines.close()
        await self._save_unsaved(quiet=False)
        if self._fatal is not None:
            raise self._fatal
        return DagOutcome(self.dag_id, self._status(), dict(self._records))

    def pause_clock(self) -> None:
        """The run waits on the user: its attempts' time limits stop (``Deadlines.pause``)."""
        if self._deadlines is not None:
            self._deadlines.pause()

    def resume_clock(self) -> None:
        """The user answered: the limits run again, the waited time given back."""
        if self._deadlines is not None:
            self._deadlines.resume()

    def cancel(self) -> None:
        """Stop the run: running nodes are cancelled, the rest never start; ``run`` returns."""
        if self._finished is None:
            self._stopping = DagStatus.CANCELLED  # before run: it starts nothing
            return
        if not self._finished.done():
            self._stop(DagStatus.CANCELLED)
            self._check_finished()

    @property
    def records(self) -> Mapping[str, NodeRecord]:
        """Each node's record now (a live view, for status displays)."""
        return self._records

    # -- start and resume ---------------------------------------------------------------
    async def _restore(self) -> None:
        store = self._store
        saved = await store.load(self.dag_id) if store is not None else {}
        trusted = self._trusted(saved) if saved else set()
        pending = NodeRecord(NodeStatus.PENDING)
        for node_id in self.plan.nodes:
            if node_id in trusted:
                record = self._records[node_id] = saved[node_id]
                self._emit(
                    node_id,
                    NodeStatus.PASSED,
                    record.attempts,
                    duration_s=record.duration_s,
                    resumed=True,
                )
            elif store is not None:
                self._records[node_id] = NodeRecord(
                    NodeStatus.PENDING, digest=self._digest(node_id)
                )
            else:
                self._records[node_id] = pending
        stopped = self._stopping is not None
        for node_id in self.plan.nodes:
            if self._passed(node_id):
                continue
            if stopped:
                self._records[node_id] = NodeRecord(
                    NodeStatus.CANCELLED, digest=self._records[node_id].digest
                )
                self._emit(node_id, NodeStatus.CANCELLED)
                self._unsaved.append(node_id)
                continue
            deps = self.plan.dependencies[node_id]
            waiting = len(deps) - sum(map(self._passed, deps)) if saved else len(deps)
            self._waiting[node_id] = waiting
            self._emit(node_id, NodeStatus.PENDING)
            if waiting == 0:
                self._push_ready(node_id)

    def _trusted(self, saved: Mapping[str, NodeRecord]) -> set[str]:
        """Nodes that passed before, as planned now, with everything upstream passed too."""
        trusted: set[str] = set()
        for layer in self.plan.layers:
            for node_id in layer:
                record = saved.get(node_id)
                if (
                    record is not None
                    and record.status is NodeStatus.PASSED
                    and record.digest == self._digest(node_id)
                    and all(dep in trusted for dep in self.plan.dependencies[node_id])
                ):
                    trusted.add(node_id)
        return trusted

    def _digest(self, node_id: str) -> str:
        text = self.plan.nodes[node_id].model_dump_json()
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    # -- scheduling ---------------------------------------------------------------------
    def _push_ready(self, node_id: str) -> None:
        heapq.heappush(self._ready, (*self.plan.ready_key[node_id], node_id))

    def _fill(self) -> None:
        ready, running = self._ready, self._running
        if not ready or len(running) >= self._limit or self._stopping is not None:
            return
        create_task = asyncio.get_running_loop().create_task
        while ready and len(running) < self._limit:
            node_id = heapq.heappop(ready)[3]
            task = create_task(self._attempts(node_id), name=node_id)
            running[node_id] = task
            task.add_done_callback(partial(self._on_done, node_id))

    def _on_done(self, node_id: str, task: asyncio.Task[NodeRecord]) -> None:
        del self._running[node_id]
        try:
            record = task.result()
        except asyncio.CancelledError:
            self._finish(node_id, NodeStatus.CANCELLED, error="cancelled")
            self._unsaved.append(node_id)
            if self._stopping is None:  # the runner cancelled itself: the node did not pass
                self._after_failure(node_id)
        except Exception as exc:
            log.error("DAG %s: node %s broke the scheduler", self.dag_id, node_id, exc_info=exc)
            self._fatal = self._fatal or exc
            self._finish(node_id, NodeStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
            self._stop(DagStatus.FAILED)
        else:
            if record.status is _PASSED:
                waiting, records = self._waiting, self._records
                for child in self.plan.dependants[node_id]:
                    waiting[child] -= 1
                    if waiting[child] == 0 and records[child].status is _PENDING:
                        heapq.heappush(self._ready, (*self.plan.ready_key[child], child))
            else:
                self._after_failure(node_id)
        if self._ready:
            self._fill()
        if not self._running:
            self._check_finished()

    def _after_failure(self, node_id: str) -> None:
        if self.plan.policy.fail_fast:
            self._stop(DagStatus.FAILED)
        else:
            self._skip_downstream(node_id)

    def _check_finished(self) -> None:
        assert self._finished is not None
        if not self._running and not self._ready and not self._finished.done():
            self._finished.set_result(None)

    def _skip_downstream(self, failed: str) -> None:
        queue = list(self.plan.dependants[failed])
        while queue:
            node_id = queue.pop()
            if self._records[node_id].status is NodeStatus.PENDING:
                self._finish(node_id, NodeStatus.SKIPPED, error=f"upstream node {failed!r} failed")
                self._unsaved.append(node_id)
                queue.extend(self.plan.dependants[node_id])

    def _stop(self, status: DagStatus) -> None:
        """Fail fast or cancel: nothing new starts, running nodes are cancelled."""
        if self._stopping is not None:
            return
        self._stopping = status
        self._ready.clear()
        final = NodeStatus.SKIPPED if status is DagStatus.FAILED else NodeStatus.CANCELLED
        reason = "the DAG stopped at a failure" if status is DagStatus.FAILED else "cancelled"
        for node_id, record in self._records.items():
            if record.status is NodeStatus.PENDING:
                self._finish(node_id, final, error=reason)
                self._unsaved.append(node_id)
        for task in self._running.values():
            task.cancel()

    def _status(self) -> DagStatus:
        if self._stopping is not None:
            return self._stopping
        passed = all(r.status is NodeStatus.PASSED for r in self._records.values())
        return DagStatus.PASSED if passed else DagStatus.FAILED

    def _passed(self, node_id: str) -> bool:
        record = self._records.get(node_id)
        return record is not None and record.status is NodeStatus.PASSED

    # -- one node -----------------------------------------------------------------------
    async def _attempts(self, node_id: str) -> NodeRecord:
        """Run the node until it passes or runs out of attempts; its final record."""
        plan, records, store, deadlines = self.plan, self._records, self._store, self._deadlines
        assert deadlines is not None
        node = plan.nodes[node_id]
        retry = plan.retry_for(node_id)
        tries = retry.max + 1
        timeout = self._time_limit(node)
        upstream = {dep: records[dep].output for dep in plan.upstream[node_id]}
        digest = records[node_id].digest
        total = 0.0
        attempt = 0
        while True:
            attempt += 1
            if self._slots is not None:
                await self._slots.acquire(self._owner, node)
            try:
                started = self._clock()
                record = NodeRecord(NodeStatus.RUNNING, attempt, digest=digest)
                records[node_id] = record
                if store is not None:
                    await store.save(self.dag_id, node_id, record)
                self._emit(node_id, NodeStatus.RUNNING, attempt)
                result = await attempt_once(self._run_node, node, upstream, timeout, deadlines)
                elapsed = self._clock() - started
            finally:
                if self._slots is not None:
                    self._slots.release(self._owner, node)
            total += elapsed
            if result.ok:
                record = NodeRecord(NodeStatus.PASSED, attempt, result.output, None, total, digest)
            elif attempt >= tries or not result.retryable:
                record = NodeRecord(NodeStatus.FAILED, attempt, None, result.error, total, digest)
            else:
                delay = retry.delay_s(attempt)
                records[node_id] = NodeRecord(
                    NodeStatus.RETRYING, attempt, None, result.error, total, digest
                )
                self._emit(
                    node_id,
                    NodeStatus.RETRYING,
                    attempt,
                    duration_s=elapsed,
                    error=result.error,
                    delay_s=delay,
                )
                await self._sleep(delay)
                continue
            records[node_id] = record
            if store is not None:
                await store.save(self.dag_id, node_id, record)
            self._emit(node_id, record.status, attempt, duration_s=total, error=record.error)
            return record

    def _finish(self, node_id: str, status: NodeStatus, *, error: str) -> None:
        """A final status set outside the node's own task (skipped, cancelled, broken)."""
        before = self._records[node_id]
        self._records[node_id] = NodeRecord(
            status, before.attempts, None, error, None, before.digest
        )
        self._emit(node_id, status, before.attempts, error=error)

    async def _save_unsaved(self, *, quiet: bool) -> None:
        if self._store is None:
            return
        pending, self._unsaved = self._unsaved, []
        for node_id in pending:
            try:
                await self._store.save(self.dag_id, node_id, self._records[node_id])
            except Exception:
                if not quiet:
                    raise
                log.exception(
                    "DAG %s: could not save node %s while cancelling", self.dag_id, node_id
                )

    def _emit(
        self,
        node_id: str,
        status: NodeStatus,
        attempt: int = 0,
        *,
        duration_s: float | None = None,
        error: str | None = None,
        delay_s: float | None = None,
        resumed: bool = False,
    ) -> None:
        if self._on_event is None:
            return
        tries = self.plan.retry_for(node_id).max + 1
        event = NodeEvent(
            self.dag_id, node_id, status, attempt, tries, duration_s, error, delay_s, resumed
        )
        try:
            self._on_event(event)
        except Exception:
            log.exception("DAG %s: a status listener failed on %s", self.dag_id, event)
