"""The message envelope every agent, the Guide and the user exchange.

Field for field the envelope of the seed; the payload is generic so a typed
payload model can ride inside it, and defaults to an untyped mapping.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from enum import IntEnum, StrEnum
from typing import Any, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.clock import utc_now
from backend.message_types import MessageType as MessageType  # noqa: PLC0414 (re-exported)


class MessageStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    DEAD_LETTERED = "dead_lettered"


class Priority(IntEnum):
    LOW = 0
    NORMAL = 1
    HIGH = 2
    CRITICAL = 3


PayloadT = TypeVar("PayloadT")


def new_id() -> str:
    return uuid.uuid4().hex


class Message(BaseModel, Generic[PayloadT]):
    """A session-aware message envelope."""

    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)

    id: str = Field(default_factory=new_id, min_length=1)
    correlation_id: str | None = None
    parent_id: str | None = None
    session_id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    target: str | None = None
    type: MessageType
    payload: PayloadT
    timestamp: datetime = Field(default_factory=utc_now)
    deadline: datetime | None = None
    ttl: timedelta | None = None
    status: MessageStatus = MessageStatus.PENDING
    attempt: int = Field(default=0, ge=0)
    max_attempts: int | None = Field(default=None, ge=1)
    priority: Priority = Priority.NORMAL
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    processed_at: datetime | None = None

    @field_validator("timestamp", "deadline", "processed_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("timestamps must carry a timezone (use UTC)")
        return value

    @field_validator("ttl")
    @classmethod
    def _ttl_positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value <= timedelta(0):
            raise ValueError("ttl must be positive")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.deadline is not None and self.deadline < self.timestamp:
            raise ValueError("deadline lies before the message's timestamp")
        if self.max_attempts is not None and self.attempt > self.max_attempts:
            raise ValueError(f"attempt {self.attempt} exceeds max_attempts {self.max_attempts}")
        return self

    def expires_at(self) -> datetime | None:
        """The earlier of the deadline and timestamp + ttl, if either is set."""
        candidates = [d for d in (self.deadline,) if d is not None]
        if self.ttl is not None:
            candidates.append(self.timestamp + self.ttl)
        return min(candidates) if candidates else None

    def is_expired(self, now: datetime | None = None) -> bool:
        limit = self.expires_at()
        return limit is not None and (now or utc_now()) > limit

    def reply(self, *, source: str, type: MessageType, payload: Any) -> Message[Any]:
        """A response correlated with this message, in the same session."""
        return Message[Any](
            session_id=self.session_id,
            source=source,
            target=self.source,
            type=type,
            payload=payload,
            correlation_id=self.correlation_id or self.id,
            parent_id=self.id,
        )


TranscriptPayload = dict[str, Any]
"""Transcript messages carry ``{"text": ...}`` plus optional extra keys."""


def message_text(message: Message[Any]) -> str:
    """The human-readable text of a message, whatever its payload shape."""
    payload = message.payload
    if isinstance(payload, dict):
        text = payload.get("text")
        if isinstance(text, str):
            return text
    if isinstance(payload, str):
        return payload
    return repr(payload)
