"""The OpenAI Chat Completions adapter (OpenAI and OpenAI-compatible servers).

One attempt per :meth:`OpenAIProvider.stream` call on ``openai.AsyncOpenAI``
with the SDK's own retries off: streamed, except where the server's profile says
it cannot stream a reply to a request with tools (llama-cpp-python), which is
asked unstreamed and its whole reply played back as the same events. The
request is built in ``messages``, the chunks are translated in ``stream``, a
whole reply in ``whole``; this module holds the call and maps the SDK's errors
to ours.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionToolChoiceOptionParam

from backend.llm._http_errors import short
from backend.llm.errors import (
    ProviderError,
    ProviderRequestError,
    ProviderStreamError,
)
from backend.llm.openai_chat.connection import OpenAIConnection, error_detail
from backend.llm.openai_chat.detect import ProfileChooser
from backend.llm.openai_chat.messages import to_openai_messages, to_openai_tools
from backend.llm.openai_chat.profiles import ProfileSetting, ServerProfile, request_options
from backend.llm.openai_chat.stream import Translation, empty_reply
from backend.llm.openai_chat.whole import completion_events
from backend.llm.types import NO_TOOL, ChatRequest, StreamEvent, StreamStopped, UsageReported

ToolChoice = Literal["auto", "required", "none"]
"""What the model may do with the offered tools; llama-cpp-python ignores tools without it."""


def _refused(exc: Exception) -> bool:
    """An error chunk saying our request is wrong (e.g. the context is too long)."""
    if not isinstance(exc, openai.APIError) or not isinstance(exc.body, dict):
        return False
    kind, code = exc.body.get("type"), exc.body.get("code")
    return kind == "invalid_request_error" or code == "context_length_exceeded"


def _tool_choice(
    request: ChatRequest, configured: ToolChoice, profile: ServerProfile, *, provider: str = ""
) -> ChatCompletionToolChoiceOptionParam | openai.Omit:
    """The request's forced tool, else the provider's setting; nothing without tools,
    nor the default "auto" for a server that reads no ``tool_choice`` (Ollama).

    "required" to a server that cannot take it (llama-cpp-python) is the one offered
    tool by name when there is one tool (the same demand), else a refused request:
    the server would fail an assert and answer HTTP 500 with no message.
    """
    if not request.tools:
        return openai.omit
    if request.tool_choice == NO_TOOL:
        return "none"
    if request.tool_choice:
        return {"type": "function", "function": {"name": request.tool_choice}}
    if configured == "auto" and not profile.tool_choice:
        return openai.omit
    if configured == "required" and not profile.required_tool_choice:
        if len(request.tools) == 1:
            return {"type": "function", "function": {"name": request.tools[0].name}}
        raise ProviderRequestError(
            f'{provider}: this server ({profile.name}) cannot take tool_choice "required" '
            f"with {len(request.tools)} tools",
            provider=provider,
            help_hint=f'set [providers.{provider}] tool_choice = "auto"',
        )
    return configured


class OpenAIProvider:
    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        name: str = "openai",
        timeout_s: float = 60.0,
        tool_choice: ToolChoice = "auto",
        profile: ProfileSetting = "auto",
        prompt_cache: bool = True,
    ) -> None:
        self.name = name
        self._prompt_cache = prompt_cache  # send prompt_cache_key where the server takes it
        self._tool_choice: ToolChoice = tool_choice
        self._timeout_s = timeout_s
        hint = (
            f"set OPENAI_API_KEY or [providers.{name}] api_key in the Sylk config; "
            f"for a local server check [providers.{name}] base_url"
        )
        self._connection = OpenAIConnection(
            api_key, base_url, name=name, timeout_s=timeout_s, auth_hint=hint
        )
        # What the server accepts (null content, which token-limit field, ...).
        self._profiles = ProfileChooser(profile, base_url, name=name)

    @property
    def profile(self) -> ServerProfile | None:
        """The server's compatibility profile, once configured or detected."""
        return self._profiles.known

    def _cache_key(self, request: ChatRequest, profile: ServerProfile) -> str | openai.Omit:
        """OpenAI caches prompt prefixes by itself; the key only routes an agent's requests
        to the machine holding its prefix. Other servers are not sent a field they may
        refuse."""
        key = request.options.cache_key
        if not (self._prompt_cache and key and profile.name == "openai"):
            return openai.omit
        return key

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        opts = request.options
        client = self._connection.sdk()
        profile = await self._profiles.choose(client, self._timeout_s)
        choice = _tool_choice(request, self._tool_choice, profile, provider=self.name)
        streamed = profile.stream_tools or not request.tools or choice == "none"
        arguments = {
            "model": opts.model,
            "messages": to_openai_messages(request, null_content=profile.null_content),
            "tools": to_openai_tools(request) if request.tools else openai.omit,
            "tool_choice": choice,
            "temperature": opts.temperature if opts.temperature is not None else openai.omit,
            "prompt_cache_key": self._cache_key(request, profile),
            **request_options(profile, limit=opts.max_tokens, stream=streamed),
        }
        if not streamed:  # the server cannot stream this reply: ask for it whole
            async for event in self._whole(client, arguments):
                yield event
            return
        try:
            stream = await client.chat.completions.create(**arguments, stream=True)
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise self._error(exc, streaming=False) from exc
        translation = Translation()
        try:
            while True:
                try:
                    chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (openai.OpenAIError, httpx2.HTTPError, ValueError) as exc:
                    raise self._error(exc, streaming=True) from exc
                try:
                    events = list(translation.feed(chunk))
                except ProviderStreamError as exc:
                    exc.provider = self.name
                    raise
                except (AttributeError, TypeError, ValueError) as exc:  # SDK: no validation
                    raise ProviderStreamError(
                        f"{self.name}: the stream carried an unreadable chunk: {short(exc)}",
                        provider=self.name,
                    ) from exc
                for event in events:
                    yield event
            if not translation.replied:
                raise empty_reply(self.name, profile.name, translation.chunks)
            try:
                for event in translation.complete_calls():
                    yield event
            except ProviderStreamError as exc:
                exc.provider = self.name
                raise
        finally:
            await stream.close()
        if translation.usage is not None:
            yield UsageReported(usage=translation.usage)
        yield StreamStopped(reason=translation.stop_reason())

    async def _whole(
        self, client: openai.AsyncOpenAI, arguments: dict[str, Any]
    ) -> AsyncIterator[StreamEvent]:
        """One unstreamed attempt, its reply played back as a stream's events."""
        try:
            reply = await client.chat.completions.create(**arguments, stream=False)
        except (openai.OpenAIError, httpx2.HTTPError, ValueError) as exc:
            raise self._error(exc, streaming=False) from exc
        try:  # all or nothing: a reply that breaks halfway never leaves half its events
            if not isinstance(reply, ChatCompletion):  # JSON the SDK could not read as one
                raise TypeError(type(reply).__name__)
            events = list(completion_events(reply))
        except ProviderStreamError as exc:
            exc.provider = self.name
            exc.message = f"{self.name}: {exc.message}"
            exc.args = (exc.message,)
            raise
        except (AttributeError, TypeError, ValueError) as exc:  # the SDK does not validate
            raise ProviderStreamError(
                f"{self.name}: unexpected reply: {short(exc)}", provider=self.name
            ) from exc
        for event in events:
            yield event

    def _error(self, exc: Exception, *, streaming: bool) -> ProviderError:
        name = self.name
        known = self._connection.transport_error(exc, streaming=streaming)
        if known is not None:
            return known
        if streaming and _refused(exc):  # an error chunk no retry can fix
            return ProviderRequestError(
                f"{name}: the stream reported an error: {error_detail(exc)}", provider=name
            )
        if streaming:  # an error chunk, a reset or garbage after HTTP 200
            return ProviderStreamError(
                f"{name}: the stream broke off: {short(exc) or type(exc).__name__}",
                provider=name,
            )
        return ProviderStreamError(f"{name}: unexpected reply: {short(exc)}", provider=name)

    async def aclose(self) -> None:
        await self._connection.aclose()
