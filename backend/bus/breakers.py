"""Circuit breakers per (session, agent): stop feeding an agent that keeps failing.

The state machine is :class:`backend.circuit.CircuitState`, shared with model providers
(closed -> open after ``threshold`` consecutive failures -> one half-open probe after
``cooldown`` -> closed on the probe's success, open again on its failure; any success
closes), with two differences that fit an agent behind a queue:

* Two checks. :meth:`AgentBreaker.check` is the send-time fail-fast: while the
  breaker is open and cooling down, :meth:`Bus.send` raises
  :class:`AgentUnavailableError` (``retryable``, with ``retry_after``). It never takes
  the probe slot. Once the cool-down is over, messages are queued again, and the
  agent's consumer calls :meth:`AgentBreaker.acquire` before each handler call: the
  first gets the probe permit, the others wait their turn.
* What happens to refused messages: they are *retried later*, not dropped. Through
  :class:`~backend.bus.retry.RetryQueue` the message is tried again after the
  remaining cool-down (counting an attempt); when ``max_attempts`` is used up it is
  dead-lettered. Without a retry queue the consumer dead-letters it as
  ``circuit_open``; a direct ``bus.send`` raises to the caller.

Handler failures of every kind count; expiry and cancellation are neutral.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from backend.bus.errors import AgentUnavailableError
from backend.circuit import PERMIT, BreakerState, CircuitState, Clock, Permit

# (session_id, agent, old state, new state)
BreakerListener = Callable[[str, str, BreakerState, BreakerState], None]

__all__ = ["PERMIT", "AgentBreaker", "AgentBreakers", "BreakerListener", "BreakerState", "Permit"]


class AgentBreaker(CircuitState):
    """The breaker of one agent in one session; refusals are :class:`AgentUnavailableError`."""

    def __init__(
        self,
        session_id: str,
        agent: str,
        *,
        threshold: int = 5,
        cooldown: float = 30.0,
        clock: Clock = time.monotonic,
        on_change: BreakerListener | None = None,
    ) -> None:
        super().__init__(threshold=threshold, cooldown=cooldown, clock=clock)
        self.session_id = session_id
        self.agent = agent
        self._on_change = on_change

    def retry_after(self) -> float | None:
        """Seconds left of the cool-down (0 once over); None when closed."""
        if self._state == "closed":
            return None
        if self._state == "half_open":
            return 0.0
        return max(0.0, self.cooling_for())

    def check(self) -> None:
        """Send-time fail-fast: raise while open and still cooling down."""
        if self._state == "open":
            left = self.cooling_for()
            if left > 0:
                raise self._refusal(left, probing=False)

    def _changed(self, old: BreakerState, new: BreakerState) -> None:
        if self._on_change is not None:
            self._on_change(self.session_id, self.agent, old, new)

    def _refusal(self, retry_after: float | None, *, probing: bool) -> AgentUnavailableError:
        return AgentUnavailableError(
            self.session_id, self.agent, failures=self._failures, retry_after=retry_after
        )


class AgentBreakers:
    """One breaker per (session, agent), created on first failure-relevant use."""

    def __init__(
        self,
        *,
        threshold: int = 5,
        cooldown: float = 30.0,
        clock: Clock = time.monotonic,
        on_change: BreakerListener | None = None,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._on_change = on_change
        self._sessions: dict[str, dict[str, AgentBreaker]] = {}

    def get(self, session_id: str, agent: str) -> AgentBreaker:
        agents = self._sessions.get(session_id)
        if agents is None:
            agents = self._sessions[session_id] = {}
        breaker = agents.get(agent)
        if breaker is None:
            breaker = agents[agent] = AgentBreaker(
                session_id,
                agent,
                threshold=self.threshold,
                cooldown=self.cooldown,
                clock=self._clock,
                on_change=self._on_change,
            )
        return breaker

    def check(self, session_id: str, agent: str) -> None:
        """Raise :class:`AgentUnavailableError` if the agent's breaker is open and cooling."""
        agents = self._sessions.get(session_id)
        if agents is not None:
            breaker = agents.get(agent)
            if breaker is not None:
                breaker.check()

    def state(self, session_id: str, agent: str) -> BreakerState:
        breaker = self._sessions.get(session_id, {}).get(agent)
        return "closed" if breaker is None else breaker.state

    def states(self, session_id: str) -> dict[str, BreakerState]:
        return {a: b.state for a, b in self._sessions.get(session_id, {}).items()}

    def drop(self, session_id: str, agent: str | None = None) -> None:
        """Forget one agent's breaker, or the whole session's."""
        if agent is None:
            self._sessions.pop(session_id, None)
        else:
            self._sessions.get(session_id, {}).pop(agent, None)
