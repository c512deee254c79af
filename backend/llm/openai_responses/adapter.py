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

from backend.llm._http_errors import short
from backend.llm.errors import (
    ProviderError,
    ProviderStreamError,
)
from backend.llm.openai_chat.connection import OpenAIConnection, error_detail
from backend.llm.openai_responses.events import ResponsesTranslation, failure
from backend.llm.openai_responses.request import ReasoningSummary, create_arguments
from backend.llm.types import ChatRequest, StreamEvent


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
        self._tool_choice: Literal["auto", "required", "none"] = tool_choice
        self._reasoning_summary: ReasoningSummary = reasoning_summary
        hint = f"set OPENAI_API_KEY or [providers.{name}] api_key in the Sylk config"
        self._connection = OpenAIConnection(
            api_key, base_url, name=name, timeout_s=timeout_s, auth_hint=hint
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        client = self._connection.sdk()
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
        known = self._connection.transport_error(exc, streaming=streaming)
        if known is not None:
            return known
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
        await self._connection.aclose()
