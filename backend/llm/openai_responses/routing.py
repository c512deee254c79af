"""Which OpenAI API a request goes to when a provider says ``api = "auto"``.

A provider is configured per name, but whether Chat Completions or the
Responses API can serve a call depends on the model, and one provider serves
many roles with different models. :class:`OpenAIApiRouter` is therefore one
provider holding both adapters and choosing per request: the Responses API for
the models served only there (OpenAI's Codex family, on api.openai.com), Chat
Completions for everything else. Neither adapter opens a connection before its
first call, so the unused one costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from backend.config.settings import ProviderSettings
from backend.llm.openai_responses.adapter import OpenAIResponsesProvider
from backend.llm.provider import Provider
from backend.llm.types import ChatRequest, StreamEvent

_RESPONSES_ONLY = re.compile(r"codex", re.IGNORECASE)


def is_openai_api(base_url: str | None) -> bool:
    """OpenAI's own API (the SDK's default when no base_url is set)."""
    return base_url is None or "api.openai.com" in base_url


def wants_responses_api(model: str, base_url: str | None) -> bool:
    """``auto``: the Responses API for models only it serves, on OpenAI's own API.

    A local server that names a model "codex" serves it through Chat Completions,
    which every OpenAI-compatible server offers.
    """
    return is_openai_api(base_url) and bool(_RESPONSES_ONLY.search(model))


class OpenAIApiRouter:
    """A provider that hands each request to the Chat or the Responses adapter."""

    def __init__(
        self, name: str, *, chat: Provider, responses: Provider, base_url: str | None
    ) -> None:
        self.name = name
        self.chat = chat
        self.responses = responses
        self._base_url = base_url

    def adapter_for(self, model: str) -> Provider:
        """The adapter that serves ``model``."""
        return self.responses if wants_responses_api(model, self._base_url) else self.chat

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        return self.adapter_for(request.options.model).stream(request)

    async def aclose(self) -> None:
        try:
            await self.chat.aclose()
        finally:
            await self.responses.aclose()


def with_responses_api(
    chat: Provider, settings: ProviderSettings, *, name: str, api_key: str | None
) -> Provider:
    """The provider for an OpenAI entry, by its ``api``: ``chat`` as built, the Responses
    adapter, or (``auto``, on OpenAI's own API) a router between the two."""
    if settings.api == "chat" or (settings.api == "auto" and not is_openai_api(settings.base_url)):
        return chat
    responses = OpenAIResponsesProvider(
        api_key,
        settings.base_url,
        name=name,
        timeout_s=settings.timeout_s,
        tool_choice=settings.tool_choice,
        reasoning_summary=settings.reasoning_summary,
    )
    if settings.api == "responses":
        return responses
    return OpenAIApiRouter(name, chat=chat, responses=responses, base_url=settings.base_url)
