"""Agent health: who is stuck, who crashed — reported, never silently waited on.

Per (session, agent) the monitor derives a :class:`HealthStatus`:

* ``CRASHED`` — the agent's watched consumer task ended with an exception (kept in
  ``error``).
* ``STOPPED`` — the watched consumer task ended without error (or was cancelled)
  while the agent is still registered: nobody drains its inbox.
* ``STALLED`` — messages are waiting and the inbox has not been drained for longer
  than ``stall_after`` seconds (measured from the later of the last drain and the
  moment the inbox stopped being empty, so a long-idle agent that just received a
  message is not stalled). A consumer busy on one message for longer than
  ``stall_after`` while others wait counts as stalled too: pick ``stall_after``
  above the longest normal turn.
* ``HEALTHY`` — otherwise.

:meth:`HealthMonitor.check` computes the report and calls ``on_change(health,
previous)`` for every agent whose status changed (an agent first seen counts as
previously healthy). :meth:`HealthMonitor.start` runs ``check`` every ``interval``
seconds on an owned task (``guide-health-monitor``), so a stall is reported at most
``stall_after + interval`` after the last drain. Each check also dead-letters
messages that expired while queued (``bus.sweep_expired``), so requests waiting on a
stuck agent fail at their deadline rather than when the agent recovers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from backend.bus.breakers import BreakerState
from backend.bus.bus import Bus
from backend.bus.inbox import Clock

log = logging.getLogger(__name__)


class HealthStatus(StrEnum):
    HEALTHY = "healthy"
    STALLED = "stalled"
    CRASHED = "crashed"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class AgentHealth:
    session_id: str
    agent: str
    status: HealthStatus
    queue_depth: int
    last_drain_age: float  # seconds since the consumer last took a message
    stalled_for: float | None  # seconds messages have waited without a drain
    circuit: BreakerState
    error: BaseException | None = None


# (current health, previous status)
HealthListener = Callable[[AgentHealth, HealthStatus], None]
_Key = tuple[str, str]


class HealthMonitor:
    def __init__(
        self,
        bus: Bus,
        *,
        stall_after: float = 30.0,
        interval: float = 1.0,
        clock: Clock | None = None,
        on_change: HealthListener | None = None,
        sweep_expired: bool = True,
    ) -> None:
        if stall_after <= 0 or interval <= 0:
            raise ValueError("stall_after and interval must be positive")
        self.bus = bus
        self.stall_after = stall_after
        self.interval = interval
        self.on_change = on_change
        self.sweep_expired = sweep_expired
        self._clock = clock or bus.clock
        self._tasks: dict[_Key, asyncio.Task[None]] = {}
        self._last: dict[_Key, HealthStatus] = {}
        self._task: asyncio.Task[None] | None = None

    def watch(self, session_id: str, agent: str, task: asyncio.Task[None]) -> None:
        """Report on ``task`` as the consumer of ``agent`` in ``session_id``."""
        self._tasks[(session_id, agent)] = task

    def unwatch(self, session_id: str, agent: str) -> None:
        self._tasks.pop((session_id, agent), None)

    def report(self, session_id: str | None = None) -> list[AgentHealth]:
        """Health of every registered agent (of one session, if given)."""
        sessions = self.bus.sessions() if session_id is None else [session_id]
        now = self._clock()
        found: list[AgentHealth] = []
        for sid in sessions:
            if not self.bus.has_session(sid):
                continue
            for agent in self.bus.agents(sid):
                found.append(self._health(sid, agent, now))
        return found

    def check(self) -> list[AgentHealth]:
        """Report, notify ``on_change`` of every status change, return the changed ones."""
        if self.sweep_expired:
            self.bus.sweep_expired()
        report = self.report()
        seen: set[_Key] = set()
        changed: list[AgentHealth] = []
        for health in report:
            key = (health.session_id, health.agent)
            seen.add(key)
            previous = self._last.get(key, HealthStatus.HEALTHY)
            self._last[key] = health.status
            if health.status != previous:
                changed.append(health)
                if self.on_change is not None:
                    try:
                        self.on_change(health, previous)
                    except Exception:
                        log.exception("health listener failed for %s/%s", *key)
        for key in [k for k in self._last if k not in seen]:
            del self._last[key]
        for key in [k for k in self._tasks if k not in seen]:
            del self._tasks[key]
        return changed

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="guide-health-monitor"
            )

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                self.check()
            except Exception:  # a bug in one check must not end monitoring
                log.exception("health check failed")
            await asyncio.sleep(self.interval)

    def _health(self, session_id: str, agent: str, now: float) -> AgentHealth:
        inbox = self.bus.inbox(session_id, agent)
        since = inbox.waiting_since()
        stalled_for = None if since is None else max(0.0, now - since)
        error: BaseException | None = None
        task = self._tasks.get((session_id, agent))
        if task is not None and task.done():
            error = None if task.cancelled() else task.exception()
            status = HealthStatus.CRASHED if error is not None else HealthStatus.STOPPED
        elif stalled_for is not None and stalled_for > self.stall_after:
            status = HealthStatus.STALLED
        else:
            status = HealthStatus.HEALTHY
        breakers = self.bus.breakers
        return AgentHealth(
            session_id=session_id,
            agent=agent,
            status=status,
            queue_depth=len(inbox),
            last_drain_age=max(0.0, now - inbox.last_drained_at),
            stalled_for=stalled_for,
            circuit="closed" if breakers is None else breakers.state(session_id, agent),
            error=error,
        )
