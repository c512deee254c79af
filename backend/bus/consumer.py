"""Agent consumers: the loop that drains an inbox into an agent's handler.

This is where the pieces meet. For each message the consumer asks the agent's
circuit breaker for a permit, awaits the handler and records the outcome:

* success -> the breaker closes/stays closed; a returned reply goes back through
  :meth:`Bus.respond` (resolving the pending request, else into the target's inbox);
* a transient error (``retryable``, e.g. :class:`TransientAgentError`) -> the breaker
  counts a failure and the message goes to the :class:`RetryQueue`;
* any other exception -> the breaker counts a failure and the message is
  dead-lettered (``handler_failed``), which fails a waiting requester at once;
* an open breaker -> the message is retried later (or dead-lettered
  ``circuit_open`` when there is no retry queue), the handler is not called;
* cancellation mid-handler (``stop``/``aclose``) -> the message is dead-lettered
  (``interrupted``) so it can be replayed.

Handler errors never end the loop. The loop ends when the inbox is closed
(unregister, close_session) or the task is cancelled. Each task is registered with
the :class:`HealthMonitor`, so a loop that does die is reported ``CRASHED``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from backend.bus.breakers import PERMIT
from backend.bus.bus import Bus
from backend.bus.dead_letter import DeadLetterReason
from backend.bus.errors import (
    AgentUnavailableError,
    BusError,
    InboxClosedError,
    is_transient,
)
from backend.bus.health import HealthMonitor
from backend.bus.inbox import Inbox
from backend.bus.retry import RetryQueue
from backend.messages import Message

log = logging.getLogger(__name__)

Handler = Callable[[Message[Any]], Awaitable[Message[Any] | None]]
_Key = tuple[str, str]


class AgentConsumers:
    def __init__(
        self,
        bus: Bus,
        *,
        retry: RetryQueue | None = None,
        health: HealthMonitor | None = None,
    ) -> None:
        self.bus = bus
        self.retry = retry
        self.health = health
        self._tasks: dict[_Key, asyncio.Task[None]] = {}
        self.handled = 0
        self.failed = 0

    def start(self, session_id: str, agent: str, handler: Handler) -> asyncio.Task[None]:
        """Run ``handler`` on every message of the agent's inbox, one at a time."""
        key = (session_id, agent)
        running = self._tasks.get(key)
        if running is not None and not running.done():
            raise RuntimeError(f"a consumer for {agent!r} in session {session_id} is running")
        inbox = self.bus.inbox(session_id, agent)
        task = asyncio.get_running_loop().create_task(
            self._run(inbox, handler), name=f"guide-consumer:{session_id}:{agent}"
        )
        task.add_done_callback(self._finished)
        self._tasks[key] = task
        if self.health is not None:
            self.health.watch(session_id, agent, task)
        return task

    def running(self, session_id: str) -> list[str]:
        return [a for (s, a), t in self._tasks.items() if s == session_id and not t.done()]

    async def stop(self, session_id: str, agent: str | None = None) -> None:
        """Cancel the session's consumers (or one agent's) and wait for them."""
        keys = [k for k in self._tasks if k[0] == session_id and (agent is None or k[1] == agent)]
        await self._cancel(keys)

    async def aclose(self) -> None:
        await self._cancel(list(self._tasks))

    async def handle(self, inbox: Inbox, message: Message[Any], handler: Handler) -> None:
        """Hand one message to ``handler`` under the agent's breaker; never raises
        for handler failures (only for cancellation)."""
        session_id, agent = inbox.session_id, inbox.agent
        breaker = self.bus.breakers.get(session_id, agent) if self.bus.breakers else None
        permit = PERMIT
        if breaker is not None:
            try:
                permit = breaker.acquire()
            except AgentUnavailableError as exc:
                self._defer(message, exc, agent)
                return
        inbox.busy_since = self.bus.clock()
        try:
            reply = await handler(message)
        except asyncio.CancelledError:
            inbox.busy_since = None
            if breaker is not None:
                breaker.record_neutral(permit)
            self.bus.dead_letter(
                message, DeadLetterReason.INTERRUPTED, error="consumer stopped", agent=agent
            )
            raise
        except Exception as exc:
            inbox.busy_since = None
            self.failed += 1
            if breaker is not None:
                breaker.record_failure(permit)
            if is_transient(exc) and self.retry is not None:
                self.retry.schedule(message, exc)
            else:
                self.bus.dead_letter(
                    message, DeadLetterReason.HANDLER_FAILED, error=exc, agent=agent
                )
            return
        inbox.busy_since = None
        self.handled += 1
        if breaker is not None:
            breaker.record_success(permit)
        if reply is not None:
            await self._reply(reply)

    async def _run(self, inbox: Inbox, handler: Handler) -> None:
        while True:
            try:
                message = await inbox.get()
            except InboxClosedError:
                return
            await self.handle(inbox, message, handler)

    async def _reply(self, reply: Message[Any]) -> None:
        try:
            if self.retry is not None:
                # Do not wait on a full inbox: the retry queue takes over instead.
                await self.retry.deliver(reply, timeout=0)
            else:
                await self.bus.respond(reply)
        except BusError as exc:
            self.bus.dead_letter(reply, DeadLetterReason.UNDELIVERABLE, error=exc)
        except asyncio.CancelledError:
            self.bus.dead_letter(reply, DeadLetterReason.INTERRUPTED, error="consumer stopped")
            raise

    def _defer(self, message: Message[Any], error: AgentUnavailableError, agent: str) -> None:
        if self.retry is not None:
            self.retry.schedule(message, error)
        else:
            self.bus.dead_letter(message, DeadLetterReason.CIRCUIT_OPEN, error=error, agent=agent)

    async def _cancel(self, keys: list[_Key]) -> None:
        tasks = [self._tasks.pop(k) for k in keys]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.health is not None:
            for key in keys:
                self.health.unwatch(*key)

    @staticmethod
    def _finished(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("consumer %s crashed", task.get_name(), exc_info=error)
