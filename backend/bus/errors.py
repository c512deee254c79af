"""Typed errors of the Guide's bus, retry queue, dead-letter queue and agent breakers.

Errors with ``retryable = True`` are transient: the retry queue tries the message
again later. Everything else is final for that delivery. :func:`is_transient` is the
one predicate every component uses (it also recognises retryable provider errors,
which carry the same attribute).
"""

from __future__ import annotations

from backend.errors import SylkError


def is_transient(error: BaseException) -> bool:
    """True if trying the same message again later may succeed."""
    return getattr(error, "retryable", False) is True


class BusError(SylkError):
    """Base class of every bus failure."""

    retryable: bool = False


class UnknownSessionError(BusError):
    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"session {session_id} has no bus shard (never opened, or closed)",
            help_hint="register the session's agents before sending to them",
        )
        self.session_id = session_id


class UnknownAgentError(BusError):
    def __init__(self, session_id: str, agent: str | None) -> None:
        what = f"agent {agent!r}" if agent else "a message without a target"
        super().__init__(
            f"{what} is not registered in session {session_id}",
            help_hint="agents only receive messages of the session they belong to",
        )
        self.session_id = session_id
        self.agent = agent


class DuplicateAgentError(BusError):
    def __init__(self, session_id: str, agent: str) -> None:
        super().__init__(f"agent {agent!r} is already registered in session {session_id}")
        self.session_id = session_id
        self.agent = agent


class InboxFullError(BusError):
    """The target's inbox stayed full for as long as the sender was willing to wait."""

    retryable = True

    def __init__(self, session_id: str, agent: str, capacity: int, waited: float) -> None:
        super().__init__(
            f"inbox of {agent!r} in session {session_id} is full "
            f"({capacity} messages) after waiting {waited:.3f}s",
            help_hint="the agent is not keeping up; see /status for its health",
        )
        self.session_id = session_id
        self.agent = agent
        self.capacity = capacity
        self.waited = waited


class InboxClosedError(BusError):
    """The inbox was unregistered while someone was waiting on it."""

    def __init__(self, session_id: str, agent: str, why: str = "was unregistered") -> None:
        super().__init__(f"inbox of {agent!r} in session {session_id} {why}")
        self.session_id = session_id
        self.agent = agent


class SessionClosedError(InboxClosedError):
    """The session's shard was closed: its waiters and pending requests fail with this."""

    def __init__(self, session_id: str, agent: str = "*") -> None:
        super().__init__(session_id, agent, why="closed with its session")


class MessageExpiredError(BusError):
    """The message's deadline or TTL passed before delivery; it was dead-lettered."""

    def __init__(self, message_id: str, session_id: str, dead_letter_id: str) -> None:
        super().__init__(
            f"message {message_id} in session {session_id} expired before delivery",
            help_hint=f"it is kept as dead letter {dead_letter_id}",
        )
        self.message_id = message_id
        self.session_id = session_id
        self.dead_letter_id = dead_letter_id


class MessageDeadLetteredError(BusError):
    """A pending request's message was dead-lettered, so no reply will come."""

    def __init__(
        self, message_id: str, reason: str, dead_letter_id: str, error: str | None
    ) -> None:
        detail = f": {error}" if error else ""
        super().__init__(
            f"request {message_id} was dead-lettered ({reason}){detail}",
            help_hint=f"inspect or replay dead letter {dead_letter_id}",
        )
        self.message_id = message_id
        self.reason = reason
        self.dead_letter_id = dead_letter_id


class RequestTimeoutError(BusError):
    def __init__(
        self, session_id: str, agent: str | None, correlation_id: str, after: float
    ) -> None:
        super().__init__(
            f"no reply from {agent!r} in session {session_id} within {after:.3f}s "
            f"(correlation {correlation_id})"
        )
        self.session_id = session_id
        self.agent = agent
        self.correlation_id = correlation_id
        self.after = after


class DuplicateRequestError(BusError):
    def __init__(self, session_id: str, correlation_id: str) -> None:
        super().__init__(
            f"a request with correlation {correlation_id} is already pending "
            f"in session {session_id}"
        )
        self.session_id = session_id
        self.correlation_id = correlation_id


class AgentUnavailableError(BusError):
    """The agent's circuit is open: it failed repeatedly and is cooling down."""

    retryable = True

    def __init__(
        self, session_id: str, agent: str, *, failures: int, retry_after: float | None
    ) -> None:
        when = "a probe is testing it" if retry_after is None else f"retry in {retry_after:.1f}s"
        super().__init__(
            f"agent {agent!r} in session {session_id} is unavailable after "
            f"{failures} failures in a row; {when}",
            help_hint="its messages are retried after the cool-down, then dead-lettered",
        )
        self.session_id = session_id
        self.agent = agent
        self.failures = failures
        self.retry_after = retry_after


class TransientAgentError(BusError):
    """Raised by an agent's handler to say: this message may succeed if tried again."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DeadLetterNotFoundError(BusError):
    def __init__(self, dead_letter_id: str) -> None:
        super().__init__(
            f"no dead letter {dead_letter_id!r}",
            help_hint="it may have been replayed, purged or dropped as the oldest",
        )
        self.dead_letter_id = dead_letter_id


def describe_failure(role: str, exc: BusError) -> str:
    """What the user is told when a request could not reach ``role`` or failed there."""
    if isinstance(exc, RequestTimeoutError):
        return f"The {role} did not answer in time; it is reported in /status. {exc}"
    if isinstance(exc, MessageDeadLetteredError):
        return f"The {role} failed on this request: {exc}. See /deadletters to replay it."
    if isinstance(exc, AgentUnavailableError):
        return f"The {role} is failing repeatedly and is paused: {exc}"
    return f"Could not deliver to the {role}: {exc}"
