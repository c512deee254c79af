"""The Guide: every user request, and every message between agents, passes here.

It routes (DSL -> cache -> patterns -> model), stamps and checks the session,
verifies the target agent belongs to that session, and delivers through the
session-sharded bus, whose retry queue, dead letters, breakers and health
monitor it owns. Pipeline-internal traffic (engineer <-> inspector <-> tester)
is the one thing that bypasses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backend.bus.breakers import AgentBreakers
from backend.bus.bus import Bus
from backend.bus.consumer import AgentConsumers, Handler
from backend.bus.dead_letter import DeadLetterQueue
from backend.bus.errors import UnknownAgentError
from backend.bus.health import HealthListener, HealthMonitor
from backend.bus.retry import RetryQueue
from backend.config.settings import GuideSettings
from backend.errors import SessionNotActiveError
from backend.guide.routing.decision import RouteDecision
from backend.guide.routing.router import Router
from backend.messages import Message

StateOf = Callable[[str], str]
USER = "user"  # the requester's own inbox, where late replies land


WORKING_STATES = ("active", "suspended")  # whose agents take requests


class Guide:
    def __init__(
        self,
        *,
        router: Router,
        settings: GuideSettings,
        state_of: StateOf,
        on_health: HealthListener | None = None,
    ) -> None:
        self.router = router
        self.settings = settings
        self._state_of = state_of
        self.dead_letters = DeadLetterQueue()
        self.breakers = AgentBreakers()
        self.bus = Bus(
            capacity=settings.inbox_capacity,
            request_timeout=settings.request_timeout_s,
            dead_letters=self.dead_letters,
            flow_log=router.flow_log,
            breakers=self.breakers,
        )
        self.retry = RetryQueue(self.bus)
        self.health = HealthMonitor(
            self.bus,
            stall_after=settings.stall_after_s,
            interval=settings.health_interval_s,
            on_change=on_health,
        )
        self.consumers = AgentConsumers(self.bus, retry=self.retry, health=self.health)
        self._started = False

    def start(self) -> None:
        """Start the background tasks (needs a running event loop)."""
        if not self._started:
            self._started = True
            self.retry.start()
            self.health.start()

    async def aclose(self) -> None:
        await self.consumers.aclose()
        if self._started:
            await self.retry.aclose()
            await self.health.aclose()

    async def route(self, text: str, *, session_id: str | None = None) -> RouteDecision:
        """The decision for ``text``; in ``session_id``, its phase may decide it first."""
        return await self.router.route(text, session_id=session_id)

    async def route_to(self, text: str, target: str | None = None) -> RouteDecision:
        """The decision for ``text``, sent to ``target`` (``@target text``) if named."""
        if target:
            text = f"@{target.strip().lstrip('@')} {text}"
        return await self.route(text)

    # -- membership ------------------------------------------------------------
    def ensure_agent(self, session_id: str, agent: str, handler: Handler) -> None:
        """Give ``agent`` an inbox and a consumer in ``session_id`` if it has none."""
        self.start()
        if not self.bus.has_agent(session_id, agent):
            self.bus.register(session_id, agent)
            self.consumers.start(session_id, agent, handler)

    async def close_session(self, session_id: str) -> None:
        await self.consumers.stop(session_id)
        self.retry.cancel_session(session_id)
        self.bus.close_session(session_id)

    # -- delivery ----------------------------------------------------------------
    def _admit(self, message: Message[Any]) -> None:
        state = self._state_of(message.session_id)  # raises for an unknown session
        # A session in the background (suspended by a switch) goes on with the work it
        # runs: its plan's nodes and their consults. The user's own requests reach only
        # the session in front; Engine.submit refuses them before they get here.
        if state not in WORKING_STATES:
            raise SessionNotActiveError(message.session_id, state)
        if message.target is None or not self.bus.has_agent(message.session_id, message.target):
            raise UnknownAgentError(message.session_id, message.target or "(none)")

    async def ask(self, message: Message[Any], *, timeout: float | None = None) -> Message[Any]:
        """Deliver a request to its target agent in its session and await the reply."""
        self._admit(message)
        return await self.bus.request(message, timeout=timeout)

    async def send(self, message: Message[Any], *, timeout: float | None = None) -> None:
        """Deliver a one-way message (a broadcast note) to its target agent in its session."""
        self._admit(message)
        await self.bus.send(message, timeout=timeout)
