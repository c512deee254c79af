"""The Guide's in-process bus, sharded by session.

Each session is a shard holding one bounded priority :class:`Inbox` per registered
agent and the session's pending requests. Nothing crosses shards: a message is
routed by its own ``session_id`` to an agent registered *in that session*, request
correlation is keyed per session, and every query that takes a session id answers
for that session only.

Delivery rules
--------------
* ``send`` enqueues into the target's inbox. When the inbox is full the sender waits
  for a slot, at most ``timeout`` seconds (``None`` means the bus's ``send_timeout``,
  5 s by default; ``0`` means do not wait), and then gets :class:`InboxFullError`.
  A sender never waits forever and a message is never dropped silently.
* A message whose deadline/TTL has passed is not delivered: the bus dead-letters it
  (reason ``expired``) and ``send`` raises :class:`MessageExpiredError`. The same
  happens if it expires while queued or while its sender waits for a slot.
* Transient refusals (:class:`InboxFullError`, :class:`AgentUnavailableError` from an
  open circuit) are raised to the caller, who may hand the message to the
  :class:`~backend.bus.retry.RetryQueue`. Unknown sessions or agents raise.
* ``request`` sends and waits for the reply whose ``correlation_id`` matches (the
  request's own id when it has none). Its time budget is the earlier of ``timeout``
  (``None`` = ``request_timeout``, 60 s) and the envelope's deadline/TTL.
  A reply resolves the request whether it comes through :meth:`respond` or
  :meth:`send`; it must target the requester (or nobody). If the request message is
  dead-lettered, or its session closes, the requester fails at once with a typed error.

The bus does not touch ``Message.status`` on the hot path; only dead-lettering sets
``DEAD_LETTERED`` (and ``error``). Like everything asyncio, it is used from one event
loop and is not thread-safe.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from backend.bus.breakers import AgentBreakers
from backend.bus.dead_letter import DeadLetter, DeadLetterQueue, DeadLetterReason
from backend.bus.errors import (
    DuplicateAgentError,
    DuplicateRequestError,
    InboxClosedError,
    InboxFullError,
    MessageDeadLetteredError,
    MessageExpiredError,
    RequestTimeoutError,
    SessionClosedError,
    UnknownAgentError,
    UnknownSessionError,
)
from backend.bus.flow_log import FlowKind, FlowLog
from backend.bus.inbox import Clock, Inbox, WallClock
from backend.clock import utc_now
from backend.messages import Message, MessageStatus

__all__ = ["Bus", "BusStats", "Inbox"]


@dataclass(slots=True)
class _Pending:
    request: Message[Any]
    future: asyncio.Future[Message[Any]]
    started: float


@dataclass(slots=True)
class _Shard:
    inboxes: dict[str, Inbox] = field(default_factory=dict)
    pending: dict[str, _Pending] = field(default_factory=dict)


class BusStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    sessions: int
    inboxes: int
    queued: int
    pending_requests: int
    delivered: int


class Bus:
    def __init__(
        self,
        *,
        capacity: int = 256,
        send_timeout: float = 5.0,
        request_timeout: float = 60.0,
        dead_letters: DeadLetterQueue | None = None,
        flow_log: FlowLog | None = None,
        breakers: AgentBreakers | None = None,
        clock: Clock = time.monotonic,
        wall_clock: WallClock = utc_now,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.send_timeout = send_timeout
        self.request_timeout = request_timeout
        self.clock = clock
        self.wall_clock = wall_clock
        # "is None", not "or": an empty queue is falsy (it has a length).
        self.dead_letters = (
            DeadLetterQueue(wall_clock=wall_clock) if dead_letters is None else dead_letters
        )
        self.dead_letters.bind(self)
        self.flow_log = FlowLog(clock=clock) if flow_log is None else flow_log
        self.breakers = breakers
        self._shards: dict[str, _Shard] = {}

    # -- membership ----------------------------------------------------------------
    def register(self, session_id: str, agent: str, *, capacity: int | None = None) -> Inbox:
        """Give ``agent`` an inbox in ``session_id`` (opening the session's shard if new)."""
        shard = self._shards.get(session_id)
        if shard is None:
            shard = self._shards[session_id] = _Shard()
        if agent in shard.inboxes:
            raise DuplicateAgentError(session_id, agent)
        inbox = Inbox(
            session_id,
            agent,
            capacity or self.capacity,
            clock=self.clock,
            wall_clock=self.wall_clock,
            on_expired=self._expired_in_inbox,
            on_delivered=self._delivered,
        )
        shard.inboxes[agent] = inbox
        return inbox

    def unregister(self, session_id: str, agent: str) -> int:
        """Remove an agent's inbox; its queued messages are dead-lettered (count returned).

        Its consumer's ``get`` raises :class:`InboxClosedError`; requests it already took
        can still be answered while the session is open.
        """
        shard = self._shard(session_id)
        inbox = shard.inboxes.pop(agent, None)
        if inbox is None:
            raise UnknownAgentError(session_id, agent)
        left = inbox.close(InboxClosedError(session_id, agent))
        for message in left:
            self.dead_letter(message, DeadLetterReason.AGENT_UNREGISTERED, agent=agent)
        if self.breakers is not None:
            self.breakers.drop(session_id, agent)
        return len(left)

    def close_session(self, session_id: str) -> int:
        """Drop the session's shard.

        Pending requests fail with :class:`SessionClosedError`, and so do consumers and
        senders waiting on its inboxes. Queued messages are dead-lettered (reason
        ``session_closed``); their count is returned. Unknown sessions are a no-op.
        """
        shard = self._shards.pop(session_id, None)
        if shard is None:
            return 0
        for pending in shard.pending.values():
            if not pending.future.done():
                pending.future.set_exception(SessionClosedError(session_id))
        shard.pending.clear()
        count = 0
        for agent, inbox in shard.inboxes.items():
            for message in inbox.close(SessionClosedError(session_id, agent)):
                self.dead_letter(message, DeadLetterReason.SESSION_CLOSED, agent=agent)
                count += 1
        if self.breakers is not None:
            self.breakers.drop(session_id)
        return count

    def sessions(self) -> list[str]:
        return list(self._shards)

    def agents(self, session_id: str) -> list[str]:
        return list(self._shard(session_id).inboxes)

    def has_session(self, session_id: str) -> bool:
        return session_id in self._shards

    def has_agent(self, session_id: str, agent: str) -> bool:
        shard = self._shards.get(session_id)
        return shard is not None and agent in shard.inboxes

    def inbox(self, session_id: str, agent: str) -> Inbox:
        inbox = self._shard(session_id).inboxes.get(agent)
        if inbox is None:
            raise UnknownAgentError(session_id, agent)
        return inbox

    def pending_requests(self, session_id: str) -> int:
        return len(self._shard(session_id).pending)

    def awaited(self, session_id: str) -> set[str]:
        """Ids of the session's requests whose senders await a reply (a snapshot keeps
        these apart from one-way messages: a reply to a wait that has ended reaches no one)."""
        shard = self._shards.get(session_id)
        return set() if shard is None else {p.request.id for p in shard.pending.values()}

    def stats(self, session_id: str | None = None) -> BusStats:
        shards = [self._shard(session_id)] if session_id is not None else self._shards.values()
        inboxes = [i for s in shards for i in s.inboxes.values()]
        return BusStats(
            sessions=1 if session_id is not None else len(self._shards),
            inboxes=len(inboxes),
            queued=sum(len(i) for i in inboxes),
            pending_requests=sum(len(s.pending) for s in shards),
            delivered=sum(i.delivered for i in inboxes),
        )

    # -- sending -------------------------------------------------------------------
    async def send(self, message: Message[Any], *, timeout: float | None = None) -> None:
        """Deliver into the target's inbox, or resolve the request it replies to."""
        session_id = message.session_id
        shard = self._shards.get(session_id)
        if shard is None:
            raise UnknownSessionError(session_id)
        if shard.pending and message.correlation_id is not None and self._resolve(shard, message):
            return
        target = message.target
        inbox = shard.inboxes.get(target) if target is not None else None
        if inbox is None:
            raise UnknownAgentError(session_id, target)
        if self.breakers is not None:
            self.breakers.check(session_id, inbox.agent)
        wait = self.send_timeout if timeout is None else timeout
        expiring = False
        if message.deadline is not None or message.ttl is not None:
            limit = message.expires_at()
            now = self.wall_clock()
            if limit is not None:
                if now > limit:
                    raise self._expire(message)
                left = (limit - now).total_seconds()
                if left < wait:
                    wait, expiring = left, True
        at = inbox.try_put(message)  # the common case: room, no waiting
        if at is not None:
            self.flow_log.record(FlowKind.SEND, message, 0.0, at)
            return
        try:
            waited = await inbox.put(message, timeout=wait)
        except InboxFullError:
            if expiring:
                raise self._expire(message) from None
            raise
        self.flow_log.record(FlowKind.SEND, message, waited * 1e6)

    async def request(self, message: Message[Any], *, timeout: float | None = None) -> Message[Any]:
        """Send ``message`` and wait for its correlated reply."""
        session_id = message.session_id
        shard = self._shard(session_id)
        if message.correlation_id is None:
            message.correlation_id = message.id
        key = message.correlation_id
        if key in shard.pending:
            raise DuplicateRequestError(session_id, key)
        budget = self.request_timeout if timeout is None else timeout
        limit = message.expires_at()
        if limit is not None:
            budget = min(budget, max(0.0, (limit - self.wall_clock()).total_seconds()))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        pending = _Pending(message, loop.create_future(), self.clock())
        shard.pending[key] = pending
        try:
            await self.send(message, timeout=budget)
            async with asyncio.timeout_at(deadline):
                return await pending.future
        except TimeoutError:
            raise RequestTimeoutError(session_id, message.target, key, budget) from None
        finally:
            if shard.pending.get(key) is pending:
                del shard.pending[key]
            if not pending.future.done():
                pending.future.cancel()
            elif not pending.future.cancelled():
                pending.future.exception()  # retrieved: the caller saw a typed error instead

    async def respond(self, reply: Message[Any], *, timeout: float | None = None) -> bool:
        """Resolve the pending request ``reply`` answers (True).

        With no such request (it timed out, or the original was a plain ``send``), the
        reply is delivered to its target's inbox like any message (False); that raises
        as :meth:`send` does if the target has no inbox.
        """
        shard = self._shards.get(reply.session_id)
        if shard is not None and reply.correlation_id is not None and self._resolve(shard, reply):
            return True
        await self.send(reply, timeout=timeout)
        return False

    def dead_letter(
        self,
        message: Message[Any],
        reason: DeadLetterReason,
        *,
        error: BaseException | str | None = None,
        agent: str | None = None,
    ) -> DeadLetter:
        """Put ``message`` in the dead-letter queue; a requester waiting on it fails now."""
        entry = self.dead_letters.add(message, reason, error=error, agent=agent)
        message.status = MessageStatus.DEAD_LETTERED
        if entry.error is not None:
            message.error = entry.error
        age = (self.wall_clock() - message.timestamp).total_seconds()
        self.flow_log.record(FlowKind.DEAD_LETTER, message, max(0.0, age) * 1e6)
        shard = self._shards.get(message.session_id)
        if shard is not None and message.correlation_id is not None:
            pending = shard.pending.get(message.correlation_id)
            if (
                pending is not None
                and pending.request.id == message.id
                and not pending.future.done()
            ):
                pending.future.set_exception(
                    MessageDeadLetteredError(message.id, reason.value, entry.id, entry.error)
                )
        return entry

    def sweep_expired(self) -> int:
        """Dead-letter every queued message that has expired; returns how many."""
        count = 0
        for shard in list(self._shards.values()):
            for inbox in list(shard.inboxes.values()):
                if len(inbox):
                    for message in inbox.take_expired():
                        self.dead_letter(message, DeadLetterReason.EXPIRED, agent=inbox.agent)
                        count += 1
        return count

    # -- internals -----------------------------------------------------------------
    def _shard(self, session_id: str) -> _Shard:
        shard = self._shards.get(session_id)
        if shard is None:
            raise UnknownSessionError(session_id)
        return shard

    def _resolve(self, shard: _Shard, message: Message[Any]) -> bool:
        key = message.correlation_id
        if key is None:
            return False
        pending = shard.pending.get(key)
        if pending is None or pending.request.id == message.id:
            return False
        if message.target is not None and message.target != pending.request.source:
            return False
        del shard.pending[key]
        if not pending.future.done():
            pending.future.set_result(message)
        self.flow_log.record(FlowKind.RESPOND, message, (self.clock() - pending.started) * 1e6)
        return True

    def _expire(self, message: Message[Any]) -> MessageExpiredError:
        entry = self.dead_letter(message, DeadLetterReason.EXPIRED)
        return MessageExpiredError(message.id, message.session_id, entry.id)

    def _expired_in_inbox(self, message: Message[Any], queued: float, now: float) -> None:
        self.dead_letter(message, DeadLetterReason.EXPIRED)

    def _delivered(self, message: Message[Any], queued: float, now: float) -> None:
        self.flow_log.record(FlowKind.DELIVER, message, queued * 1e6, now)
