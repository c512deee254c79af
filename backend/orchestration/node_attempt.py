"""One attempt at one node: the runner called under the node's time limit.

Whatever the runner does, the scheduler gets a :class:`NodeResult` back: an exception
becomes a failed attempt naming it, running past the limit a failed attempt saying
so, a wrong return value a failure that is not retried. Only cancellation from
outside (fail_fast, cancelling the DAG) passes through.

Time limits run on :class:`Deadlines`, one timer per DAG run rather than one per
attempt (``asyncio.timeout`` arms and cancels a loop timer each time, which was most
of the scheduler's overhead per node). Attempts with the same limit expire in the
order they started, so each limit keeps a FIFO queue; the one timer waits for the
earliest head, and finished attempts leave their queue when they reach its head.

The clock can stop (:meth:`Deadlines.pause`): while the run waits on the user (an
approval, a budget, a plan question), no attempt's time runs out; at :meth:`resume`
every running attempt's limit moves on by the time the user took.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from backend.orchestration.records import NodeResult
from backend.plans import PlanNode

RunNode = Callable[[PlanNode, Mapping[str, Any]], Awaitable[NodeResult]]
"""``run_node(node, upstream_outputs)``: runs one node; its dependencies' outputs by id."""


class Deadline:
    """One attempt's time limit: ``expired`` once the attempt's task was cancelled for it."""

    __slots__ = ("active", "due", "expired", "task")

    def __init__(self, due: float, task: asyncio.Task[Any]) -> None:
        self.due = due
        self.task = task
        self.active = True
        self.expired = False


class Deadlines:
    """The time limits of every running attempt of one DAG run, on one loop timer."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._queues: dict[float, deque[Deadline]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = 0.0
        self._paused = 0  # pauses not yet resumed (questions open at once)
        self._paused_at = 0.0

    def start(self, limit_s: float) -> Deadline:
        """Start the current task's attempt clock; set ``active`` False when it ends."""
        task = asyncio.current_task()
        assert task is not None, "a deadline belongs to a task"
        deadline = Deadline(self._loop.time() + limit_s, task)
        queue = self._queues.get(limit_s)
        if queue is None:
            queue = self._queues[limit_s] = deque()
        while queue and not queue[0].active:
            queue.popleft()  # attempts that ended in time
        queue.append(deadline)
        if not self._paused and (self._timer is None or deadline.due < self._timer_due):
            self._arm(deadline.due)
        return deadline

    def pause(self) -> None:
        """Stop the clock (the run waits on the user); pauses nest."""
        self._paused += 1
        if self._paused == 1:
            self._paused_at = self._loop.time()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def resume(self) -> None:
        """Start the clock again: every running attempt gets the paused time back."""
        if self._paused == 0:
            return
        self._paused -= 1
        if self._paused:
            return
        waited = self._loop.time() - self._paused_at
        earliest: float | None = None
        for queue in self._queues.values():
            for deadline in queue:
                deadline.due += waited
            if queue and (earliest is None or queue[0].due < earliest):
                earliest = queue[0].due
        if earliest is not None:
            self._arm(earliest)

    def close(self) -> None:
        """Disarm the timer (the run is over)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queues.clear()

    def _arm(self, due: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(due, self._expire)
        self._timer_due = due

    def _expire(self) -> None:
        self._timer = None
        if self._paused:
            return  # resume re-arms
        now = self._loop.time()
        earliest: float | None = None
        for queue in self._queues.values():
            while queue and (not queue[0].active or queue[0].due <= now):
                head = queue.popleft()
                if head.active:
                    head.expired = True
                    head.task.cancel()
            if queue and (earliest is None or queue[0].due < earliest):
                earliest = queue[0].due
        if earliest is not None:
            self._arm(earliest)


async def attempt_once(
    run_node: RunNode,
    node: PlanNode,
    upstream: Mapping[str, Any],
    limit_s: float,
    deadlines: Deadlines,
) -> NodeResult:
    """Call ``run_node`` once, within ``limit_s`` seconds; raises only CancelledError."""
    deadline = deadlines.start(limit_s)
    try:
        result = await run_node(node, upstream)
    except asyncio.CancelledError:
        if deadline.expired and deadline.task.uncancel() == 0:
            return NodeResult.failed(f"timed out after {limit_s:g} s")
        raise  # cancelled from outside (too): the scheduler stops the node
    except Exception as exc:
        if deadline.expired and deadline.task.uncancel() == 0:
            return NodeResult.failed(f"timed out after {limit_s:g} s")
        return NodeResult.failed(f"{type(exc).__name__}: {exc}")
    finally:
        deadline.active = False
    if deadline.expired and deadline.task.uncancel() == 0:
        # The runner swallowed the cancellation and answered late: past its limit all the same.
        return NodeResult.failed(f"timed out after {limit_s:g} s")
    if not isinstance(result, NodeResult):
        message = f"the node's runner returned {type(result).__name__}, not a NodeResult"
        return NodeResult.failed(message, retryable=False)
    if not result.ok and not result.error:
        return NodeResult.failed("the node's runner reported a failure without a reason")
    return result
