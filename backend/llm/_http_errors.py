"""HTTP status codes and headers to typed provider errors, shared by the adapters."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from backend.llm.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderUnavailableError,
)

# Statuses a retry can fix besides 429 and 5xx: request timeout, conflict, overloaded.
_RETRYABLE_4XX = frozenset({408, 409})
# A server that validates requests with pydantic (llama-cpp-python) answers a malformed
# one with HTTP 500 and "1 validation error for ChatCompletionRequest...": no retry fixes it.
_VALIDATION_ERROR = re.compile(r"\bvalidation errors? for\b", re.IGNORECASE)


def is_validation_error(detail: str) -> bool:
    """Whether an error's text says the request itself failed validation."""
    return bool(_VALIDATION_ERROR.search(detail))


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_for_status(
    status: int,
    detail: str,
    *,
    provider: str,
    retry_after: float | None,
    auth_hint: str,
) -> ProviderError:
    """The typed error for a non-2xx response."""
    where = f"{provider}: HTTP {status}"
    if status in (401, 403):
        what = "the API key was rejected" if status == 401 else "the key lacks access"
        return ProviderAuthError(
            f"{where}: {what} ({detail})", provider=provider, status=status, help_hint=auth_hint
        )
    if status == 429:
        return ProviderRateLimitError(
            f"{where}: rate limited ({detail})",
            provider=provider,
            status=status,
            retry_after=retry_after,
            help_hint="Sylk retries after the wait the provider asks for",
        )
    if status >= 500 and is_validation_error(detail):
        return ProviderRequestError(
            f"{where}: the server rejected the request as invalid ({detail})",
            provider=provider,
            status=status,
            help_hint="the server cannot accept this request; retrying will not help",
        )
    if status >= 500 or status in _RETRYABLE_4XX:
        return ProviderUnavailableError(
            f"{where}: the provider is unavailable or overloaded ({detail})",
            provider=provider,
            status=status,
            retry_after=retry_after,
        )
    return ProviderRequestError(
        f"{where}: the request was refused ({detail})",
        provider=provider,
        status=status,
        help_hint="check the model name and the request; retrying will not help",
    )


def short(text: object, limit: int = 300) -> str:
    """An error detail short enough for one line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
