"""Typed provider failures. ``retryable`` decides what the retrying client does."""

from __future__ import annotations

from backend.errors import SylkError


class ProviderError(SylkError):
    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        help_hint: str | None = None,
    ) -> None:
        super().__init__(message, help_hint=help_hint)
        self.provider = provider
        self.status = status
        self.retry_after = retry_after


class ProviderNotConfiguredError(ProviderError):
    """No usable provider: says which one to configure and how."""


class ProviderAuthError(ProviderError):
    """401/403: the key is missing, wrong or lacks access. Never retried."""


class ProviderRequestError(ProviderError):
    """4xx other than 408/409/429: our request is wrong. Never retried."""


class ProviderRateLimitError(ProviderError):
    retryable = True


class ProviderUnavailableError(ProviderError):
    """408, 409, 5xx, 529 (overloaded)."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """Refused, reset or dropped before any output arrived."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    retryable = True


class ProviderStreamError(ProviderError):
    """The stream failed after HTTP 200 (an SSE error event, a reset)."""

    retryable = True


class DeadlineExceededError(ProviderError):
    """The call's overall deadline passed; retries stop here."""


class CircuitOpenError(ProviderError):
    """Too many recent failures for this provider and model; not calling it now."""
