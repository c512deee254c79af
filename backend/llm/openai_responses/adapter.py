"""The OpenAI Responses API adapter: one streamed attempt per call.

Some OpenAI models (the Codex family) are served only by ``/v1/responses``.
This adapter speaks it through the real SDK (``client.responses.create`` with
``stream=True``) with the SDK's retries off, and yields the same vendor-neutral
events and typed errors as the Chat Completions adapter, so the retrying client
and everything above it cannot tell them apart. HTTP errors map through
:mod:`backend.llm._http_errors`; an ``error`` event or a failed response is a
typed error by its code (an invalid request is not retried).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx2
import openai

from backend.llm._http_errors import error_for_status, parse_retry_after, short
from backend.llm.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from backend.llm.openai_responses.events import ResponsesTranslation, failure
from backend.llm.openai_responses.request import ReasoningSummary, create_arguments
from backend.llm.types import ChatRequest, StreamEvent


def error_detail(exc: Exception) -> str:
    """What the server said, from the error body the SDK kept, else the exception."""
    body = exc.body if isinstance(exc, openai.APIError) else None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return short(message)
    return short(exc)


def _error_code(exc: Exception) -> str | None:
    body = exc.body if isinstance(exc, openai.APIError) else None
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if not isinstance(inner, dict):
        return None
    code = inner.get("code") or inner.get("type")
    return str(code) if code else None


class OpenAIResponsesProvider:
    """``POST /v1/responses``, streamed; ``store`` off, the whole history sent each time."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        name: str = "openai",
        timeout_s: float = 60.0,
        tool_choice: Literal["auto", "required", "none"] = "auto",
        reasoning_summary: ReasoningSummary = "auto",
    ) -> None:
        self.name = name
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._tool_choice: Literal["auto", "required", "none"] = tool_choice
        self._reasoning_summary: ReasoningSummary = reasoning_summary
        self._client: openai.AsyncOpenAI | None = None

    @property
    def _auth_hint(self) -> str:
        return f"set OPENAI_API_KEY or [providers.{self.name}] api_key in the Sylk config"

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            try:
                self._client = openai.AsyncOpenAI(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    timeout=self._timeout_s,
                    max_retries=0,  # ModelClient owns every retry
                )
            except openai.OpenAIError as exc:
                raise ProviderAuthError(
                    f"{self.name}: cannot set up the client: {exc}",
                    provider=self.name,
                    help_hint=self._auth_hint,
                ) from exc
        return self._client

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        client = self._sdk()
        arguments: dict[str, Any] = create_arguments(
            request, tool_choice=self._tool_choice, reasoning_summary=self._reasoning_summary
        )
        try:
            stream = await client.responses.create(**arguments)
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise self._error(exc, streaming=False) from exc
        translation = ResponsesTranslation(self.name)
        try:
            while True:
                try:
                    event = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (openai.OpenAIError, httpx2.HTTPError, ValueError) as exc:
                    raise self._error(exc, streaming=True) from exc
                for ours in translation.feed(event):
                    yield ours
            for ours in translation.finish():
                yield ours
        finally:
            await stream.close()

    def _error(self, exc: Exception, *, streaming: bool) -> ProviderError:
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
            return ProviderTimeoutError(f"{name}: no data for {self._timeout_s:g}s", provider=name)
        if isinstance(exc, (openai.APIConnectionError, httpx2.HTTPError)) and not streaming:
            where = self._base_url or "api.openai.com"
            return ProviderConnectionError(
                f"{name}: cannot connect to {where}: {short(exc.__cause__ or exc)}",
                provider=name,
                help_hint=f"is the server at {where} running? check [providers.{name}] base_url",
            )
        if streaming and isinstance(exc, openai.APIError) and isinstance(exc.body, dict):
            # An error event the SDK raised itself ({"error": {...}} in the data).
            return failure(_error_code(exc), error_detail(exc), provider=name)
        if streaming:  # a reset or garbage after HTTP 200
            return ProviderStreamError(
                f"{name}: the stream broke off: {short(exc) or type(exc).__name__}",
                provider=name,
            )
        return ProviderStreamError(f"{name}: unexpected reply: {short(exc)}", provider=name)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
