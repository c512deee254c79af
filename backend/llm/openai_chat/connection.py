"""What both OpenAI adapters share: the SDK client and its errors as ours.

The Chat Completions adapter (this package) and the Responses API adapter
(``backend.llm.openai_responses``) talk to the same servers through the same SDK
client, with the SDK's own retries off, and its HTTP, timeout and connection
errors mean the same for both. What differs (error events inside a stream) stays
with each adapter.
"""

from __future__ import annotations

import httpx2
import openai

from backend.llm._http_errors import error_for_status, parse_retry_after, short
from backend.llm.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)


def error_detail(exc: Exception) -> str:
    """What the server said, from the error body the SDK kept, else the exception.

    OpenAI's ``{"error": {"message": ...}}``, and FastAPI's 422
    ``{"detail": [{"loc": [...], "msg": ...}, ...]}`` (llama-cpp-python, vLLM).
    """
    body = exc.body if isinstance(exc, openai.APIError) else None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return short(message)
        problems = body.get("detail")
        if isinstance(problems, list) and problems:
            return short("; ".join(_problem(p) for p in problems))
    return short(exc)


def _problem(problem: object) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    where = ".".join(str(part) for part in problem.get("loc") or ())
    message = str(problem.get("msg", problem))
    return f"{where}: {message}" if where else message


class OpenAIConnection:
    """One lazily made ``openai.AsyncOpenAI`` for a configured provider."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        name: str,
        timeout_s: float,
        auth_hint: str,
    ) -> None:
        self.name = name
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._auth_hint = auth_hint
        self._client: openai.AsyncOpenAI | None = None

    def sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            try:
                self._client = openai.AsyncOpenAI(
                    api_key=self._api_key,
                    base_url=self.base_url,
                    timeout=self.timeout_s,
                    max_retries=0,  # ModelClient owns every retry
                )
            except openai.OpenAIError as exc:
                raise ProviderAuthError(
                    f"{self.name}: cannot set up the client: {exc}",
                    provider=self.name,
                    help_hint=self._auth_hint,
                ) from exc
        return self._client

    def transport_error(self, exc: Exception, *, streaming: bool) -> ProviderError | None:
        """An HTTP status, a timeout or a failed connection as our typed error; None for
        what only the adapter can read (an error event inside the stream, garbage)."""
        name = self.name
        if isinstance(exc, openai.APIStatusError) and exc.status_code >= 400:
            return error_for_status(
                exc.status_code,
                error_detail(exc),
                provider=name,
                retry_after=parse_retry_after(exc.response.headers),
                auth_hint=self._auth_hint,
            )
        if isinstance(exc, (openai.APITimeoutError, httpx2.TimeoutException)):
            return ProviderTimeoutError(f"{name}: no data for {self.timeout_s:g}s", provider=name)
        if isinstance(exc, (openai.APIConnectionError, httpx2.HTTPError)) and not streaming:
            where = self.base_url or "api.openai.com"
            return ProviderConnectionError(
                f"{name}: cannot connect to {where}: {short(exc.__cause__ or exc)}",
                provider=name,
                help_hint=f"is the server at {where} running? check [providers.{name}] base_url",
            )
        return None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
