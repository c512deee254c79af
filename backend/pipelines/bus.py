"""The pipeline-internal bus: engineer <-> inspector <-> tester, bypassing the Guide.

The seed's one exception to "everything goes through the Guide": inside one
pipeline, feedback travels directly. A :class:`PipelineBus` is scoped to one
pipeline of one session; it routes by role:

* ``INSPECTOR_FEEDBACK`` and ``TESTER_FEEDBACK`` -> the engineer (bounded, 8 each
  in the seed; here one bounded engineer inbox of ``feedback_capacity``);
* ``PIPELINE_COMPLETE`` and ``PIPELINE_FAILED`` -> the control role (whoever runs the
  pipeline, normally the pipeline manager);
* any other message type -> the role named by ``message.target`` (e.g. the engineer
  telling the inspector its work is ready).

Messages of another session are refused, a closed bus refuses sends and wakes
receivers with :class:`PipelineClosedError`, a full inbox makes the sender wait
then raise :class:`InboxFullError`, and a message that expires is kept in the
dead-letter queue, never dropped silently. Priorities and deadlines behave as on
the Guide's bus (it reuses the same :class:`Inbox`).
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from backend.bus.dead_letter import DeadLetterQueue, DeadLetterReason
from backend.bus.errors import MessageExpiredError
from backend.bus.inbox import Inbox
from backend.errors import SylkError
from backend.messages import Message, MessageType, Priority


class PipelineRole(StrEnum):
    ENGINEER = "engineer"
    INSPECTOR = "inspector"
    TESTER = "tester"
    CONTROL = "control"


ROUTES: dict[MessageType, PipelineRole] = {
    MessageType.INSPECTOR_FEEDBACK: PipelineRole.ENGINEER,
    MessageType.TESTER_FEEDBACK: PipelineRole.ENGINEER,
    MessageType.PIPELINE_COMPLETE: PipelineRole.CONTROL,
    MessageType.PIPELINE_FAILED: PipelineRole.CONTROL,
}


class PipelineBusError(SylkError):
    pass


class PipelineClosedError(PipelineBusError):
    def __init__(self, pipeline_id: str) -> None:
        super().__init__(f"pipeline {pipeline_id} is closed")
        self.pipeline_id = pipeline_id


class PipelineRouteError(PipelineBusError):
    """The message belongs to another session, or names no role of this pipeline."""


class PipelineTimeoutError(PipelineBusError):
    def __init__(self, pipeline_id: str, role: PipelineRole, after: float) -> None:
        super().__init__(f"nothing for the {role} of pipeline {pipeline_id} within {after:.3f}s")
        self.pipeline_id = pipeline_id
        self.role = role


@runtime_checkable
class PipelineBus(Protocol):
    """What a pipeline's engineer, inspector, tester and runner use to talk."""

    @property
    def pipeline_id(self) -> str: ...

    @property
    def session_id(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    async def send(self, message: Message[Any], *, timeout: float | None = None) -> None: ...  # noqa: ASYNC109

    async def receive(
        self,
        role: PipelineRole,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Message[Any]: ...

    def close(self) -> list[Message[Any]]: ...


class InMemoryPipelineBus:
    """One pipeline's bus: a bounded priority inbox per role, in this process."""

    def __init__(
        self,
        pipeline_id: str,
        session_id: str,
        *,
        feedback_capacity: int = 16,
        capacity: int = 8,
        default_timeout: float = 30.0,
        dead_letters: DeadLetterQueue | None = None,
    ) -> None:
        self._pipeline_id = pipeline_id
        self._session_id = session_id
        self.default_timeout = default_timeout
        self.dead_letters = DeadLetterQueue(capacity=64) if dead_letters is None else dead_letters
        self._inboxes = {
            role: Inbox(
                session_id,
                f"{pipeline_id}/{role}",
                feedback_capacity if role is PipelineRole.ENGINEER else capacity,
                on_expired=self._expired,
            )
            for role in PipelineRole
        }
        self._closed = False

    @property
    def pipeline_id(self) -> str:
        return self._pipeline_id

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def closed(self) -> bool:
        return self._closed

    def route(self, message: Message[Any]) -> PipelineRole:
        """The role ``message`` goes to, or :class:`PipelineRouteError`."""
        if message.session_id != self._session_id:
            raise PipelineRouteError(
                f"pipeline {self._pipeline_id} belongs to session {self._session_id}, "
                f"not {message.session_id}"
            )
        role = ROUTES.get(message.type)
        if role is not None:
            return role
        try:
            return PipelineRole(message.target or "")
        except ValueError:
            roles = ", ".join(r.value for r in PipelineRole)
            raise PipelineRouteError(
                f"{message.type} to {message.target!r} names no role of the pipeline ({roles})"
            ) from None

    async def send(self, message: Message[Any], *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if self._closed:
            raise PipelineClosedError(self._pipeline_id)
        role = self.route(message)
        if message.is_expired():
            entry = self.dead_letters.add(message, DeadLetterReason.EXPIRED)
            raise MessageExpiredError(message.id, message.session_id, entry.id)
        wait = self.default_timeout if timeout is None else timeout
        await self._inboxes[role].put(message, timeout=wait)

    async def receive(self, role: PipelineRole, *, timeout: float | None = None) -> Message[Any]:  # noqa: ASYNC109
        """The next message for ``role``; waits up to ``timeout`` (default 30 s)."""
        inbox = self._inboxes[role]
        wait = self.default_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(wait):
                return await inbox.get()
        except TimeoutError:
            raise PipelineTimeoutError(self._pipeline_id, role, wait) from None

    def pending(self, role: PipelineRole) -> int:
        return len(self._inboxes[role])

    def close(self) -> list[Message[Any]]:
        """Refuse further traffic; returns undelivered messages (also dead-lettered)."""
        if self._closed:
            return []
        self._closed = True
        left: list[Message[Any]] = []
        for inbox in self._inboxes.values():
            left.extend(inbox.close(PipelineClosedError(self._pipeline_id)))
        for message in left:
            self.dead_letters.add(message, DeadLetterReason.SESSION_CLOSED, error="pipeline closed")
        return left

    # -- the seed's typed helpers ----------------------------------------------------
    async def send_inspector_feedback(self, payload: Any, *, source: str = "inspector") -> None:
        await self.send(self._message(MessageType.INSPECTOR_FEEDBACK, source, "engineer", payload))

    async def send_tester_feedback(self, payload: Any, *, source: str = "tester") -> None:
        await self.send(self._message(MessageType.TESTER_FEEDBACK, source, "engineer", payload))

    async def complete(self, payload: Any, *, source: str = "engineer") -> None:
        await self.send(self._message(MessageType.PIPELINE_COMPLETE, source, "control", payload))

    async def fail(self, reason: str, *, source: str = "engineer") -> None:
        payload = {"reason": reason}
        await self.send(
            self._message(MessageType.PIPELINE_FAILED, source, "control", payload, Priority.HIGH)
        )

    def _message(
        self,
        type: MessageType,
        source: str,
        target: str,
        payload: Any,
        priority: Priority = Priority.NORMAL,
    ) -> Message[Any]:
        return Message[Any](
            session_id=self._session_id,
            source=source,
            target=target,
            type=type,
            payload=payload,
            priority=priority,
            metadata={"pipeline_id": self._pipeline_id},
        )

    def _expired(self, message: Message[Any], queued: float, now: float) -> None:
        self.dead_letters.add(message, DeadLetterReason.EXPIRED)
