"""The Anthropic Messages API adapter.

One streamed attempt per :meth:`AnthropicProvider.stream` call on
``anthropic.AsyncAnthropic`` with the SDK's own retries off. Raw stream events
become vendor-neutral ones; SDK and transport failures become typed
:class:`~backend.llm.errors.ProviderError` subclasses.

Prompt caching (unless ``[providers.NAME] prompt_cache = false``, for proxies that
refuse the field): ``cache_control`` breakpoints, four at most as the API allows,
on the stable prefix (the last tool, the system prompt) and two rolling ones (the
last message, and the end of the conversation before this turn's request), so each
request reads what the one before it wrote; see :func:`mark_cache_breakpoints`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import anthropic
import httpx2
from anthropic.types import (
    CacheControlEphemeralParam,
    MessageParam,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    TextBlockParam,
    ToolChoiceParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)

from backend.llm._http_errors import error_for_status, parse_retry_after, short
from backend.llm.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from backend.llm.types import (
    NO_TOOL,
    ChatRequest,
    StopReason,
    StreamEvent,
    StreamStopped,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UsageReported,
)

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "model_context_window_exceeded": "max_tokens",
    "pause_turn": "end_turn",
    "refusal": "error",
}
# ``error.type`` of an SSE error event that no retry can fix.
_AUTH_ERRORS = frozenset({"authentication_error", "permission_error"})
_REQUEST_ERRORS = frozenset({"invalid_request_error", "not_found_error", "request_too_large"})


def to_anthropic_messages(request: ChatRequest) -> list[MessageParam]:
    """Our messages as Messages API ``messages`` (empty text blocks dropped)."""
    out: list[MessageParam] = []
    for message in request.messages:
        blocks: list[TextBlockParam | ToolUseBlockParam | ToolResultBlockParam] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text:
                    blocks.append({"type": "text", "text": block.text})
            elif isinstance(block, ToolUseBlock):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": block.call.id,
                        "name": block.call.name,
                        "input": block.call.arguments,
                    }
                )
            elif isinstance(block, ToolResultBlock):
                result: ToolResultBlockParam = {
                    "type": "tool_result",
                    "tool_use_id": block.tool_call_id,
                    "content": block.content,
                }
                if block.is_error:
                    result["is_error"] = True
                blocks.append(result)
        if blocks:
            out.append(cast(MessageParam, {"role": message.role, "content": blocks}))
    return out


EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}


def mark_cache_breakpoints(tools: list[ToolParam], messages: list[MessageParam]) -> None:
    """Put ``cache_control`` on the last tool and on the last block of two messages: the
    last one (the prefix the turn's next request reads) and the one before the latest
    user text (the conversation before this turn, which the next turn reads: a turn's
    tool calls are not kept in its history). With the system block (:func:`_system`)
    that is four, the API's limit."""
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    asked = max(
        (n for n, m in enumerate(messages) if m["role"] == "user" and _has_text(m)), default=-1
    )
    for n in sorted({asked - 1, len(messages) - 1}):
        content = messages[n]["content"] if n >= 0 else None
        if isinstance(content, list) and content:
            block = cast(dict[str, Any], content[-1])
            block["cache_control"] = EPHEMERAL


def _has_text(message: MessageParam) -> bool:
    content = message["content"]
    if isinstance(content, str):
        return bool(content)
    return any(isinstance(b, dict) and b.get("type") == "text" for b in content)


def _system(text: str | None, cached: bool) -> str | list[TextBlockParam] | anthropic.Omit:
    if not text:
        return anthropic.omit
    if not cached:
        return text
    return [{"type": "text", "text": text, "cache_control": EPHEMERAL}]


def _tool_choice(request: ChatRequest) -> ToolChoiceParam | anthropic.Omit:
    """A named tool the model must call, or none at all (NO_TOOL); else the API's auto."""
    if not request.tools or not request.tool_choice:
        return anthropic.omit
    if request.tool_choice == NO_TOOL:
        return {"type": "none"}
    return {"type": "tool", "name": request.tool_choice}


def to_anthropic_tools(request: ChatRequest) -> list[ToolParam]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]


class _Translation:
    """Raw Messages API stream events to our events, for one attempt."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.stop: StopReason = "end_turn"
        self.finished = False
        self._tool_of_block: dict[int, int] = {}  # content block index -> tool ordinal
        self._tools: dict[int, tuple[str, str, list[str], dict[str, Any]]] = {}

    def feed(self, event: RawMessageStreamEvent) -> Iterator[StreamEvent]:
        if isinstance(event, RawContentBlockDeltaEvent):
            delta = event.delta
            if delta.type == "text_delta":
                if delta.text:
                    yield TextDelta(text=delta.text)
            elif delta.type == "input_json_delta":
                ordinal = self._tool_of_block.get(event.index)
                if ordinal is not None and delta.partial_json:
                    self._tools[ordinal][2].append(delta.partial_json)
                    yield ToolCallArgsDelta(index=ordinal, fragment=delta.partial_json)
        elif isinstance(event, RawContentBlockStartEvent):
            block = event.content_block
            if block.type == "text" and block.text:
                yield TextDelta(text=block.text)
            elif block.type == "tool_use":
                ordinal = len(self._tools)
                self._tool_of_block[event.index] = ordinal
                self._tools[ordinal] = (block.id, block.name, [], dict(block.input or {}))
                yield ToolCallStarted(index=ordinal, id=block.id, name=block.name)
        elif isinstance(event, RawContentBlockStopEvent):
            ordinal = self._tool_of_block.pop(event.index, None)
            if ordinal is not None:
                yield self._complete(ordinal)
        elif isinstance(event, RawMessageStartEvent):
            first = event.message.usage
            self.usage = Usage(
                input_tokens=first.input_tokens or 0,
                output_tokens=first.output_tokens or 0,
                cache_read_tokens=first.cache_read_input_tokens or 0,
                cache_write_tokens=first.cache_creation_input_tokens or 0,
            )
        elif isinstance(event, RawMessageDeltaEvent):
            if event.delta.stop_reason is not None:
                self.stop = _STOP_REASONS.get(event.delta.stop_reason, "end_turn")
            total = event.usage  # cumulative counts; absent ones keep message_start's
            self.usage = Usage(
                input_tokens=_pick(total.input_tokens, self.usage.input_tokens),
                output_tokens=_pick(total.output_tokens, self.usage.output_tokens),
                cache_read_tokens=_pick(
                    total.cache_read_input_tokens, self.usage.cache_read_tokens
                ),
                cache_write_tokens=_pick(
                    total.cache_creation_input_tokens, self.usage.cache_write_tokens
                ),
            )
        elif isinstance(event, RawMessageStopEvent):
            self.finished = True
            yield UsageReported(usage=self.usage)
            yield StreamStopped(reason=self.stop)

    def _complete(self, ordinal: int) -> ToolCallCompleted:
        call_id, name, fragments, initial = self._tools[ordinal]
        # The block is complete: arguments that do not parse go back to the model.
        call = ToolCall.from_raw(call_id, name, "".join(fragments), initial)
        return ToolCallCompleted(index=ordinal, call=call)


def _pick(value: int | None, fallback: int) -> int:
    return fallback if value is None else value


class AnthropicProvider:
    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        name: str = "anthropic",
        timeout_s: float = 60.0,
        prompt_cache: bool = True,
    ) -> None:
        self.name = name
        self.prompt_cache = prompt_cache  # off for proxies that refuse cache_control
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def _auth_hint(self) -> str:
        return (
            f"set ANTHROPIC_API_KEY or [providers.{self.name}] api_key in the Sylk config "
            "to a valid Anthropic key"
        )

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            try:
                self._client = anthropic.AsyncAnthropic(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    timeout=self._timeout_s,
                    max_retries=0,  # ModelClient owns every retry
                )
            except anthropic.AnthropicError as exc:
                raise ProviderAuthError(
                    f"{self.name}: cannot set up the client: {exc}",
                    provider=self.name,
                    help_hint=self._auth_hint,
                ) from exc
        return self._client

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        opts = request.options
        client = self._sdk()
        messages, tools = to_anthropic_messages(request), to_anthropic_tools(request)
        if self.prompt_cache:
            mark_cache_breakpoints(tools, messages)
        try:
            stream = await client.messages.create(
                model=opts.model,
                max_tokens=opts.max_tokens,
                messages=messages,
                system=_system(request.system, self.prompt_cache),
                tools=tools if tools else anthropic.omit,
                tool_choice=_tool_choice(request),
                stream=True,
                # This SDK has no temperature argument; the API still takes it.
                extra_body={"temperature": opts.temperature}
                if opts.temperature is not None
                else None,
            )
        except (anthropic.AnthropicError, httpx2.HTTPError) as exc:
            raise self._error(exc, streaming=False) from exc
        except TypeError as exc:
            if "authentication" not in str(exc):
                raise
            raise ProviderAuthError(  # the SDK found no credentials at all
                f"{self.name}: no API key", provider=self.name, help_hint=self._auth_hint
            ) from exc
        translation = _Translation()
        try:
            while True:
                try:
                    raw = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (anthropic.AnthropicError, httpx2.HTTPError, ValueError) as exc:
                    raise self._error(exc, streaming=True) from exc
                try:
                    for event in translation.feed(raw):
                        yield event
                except ProviderStreamError as exc:
                    exc.provider = self.name
                    raise
        finally:
            await stream.close()
        if not translation.finished:
            raise ProviderStreamError(
                f"{self.name}: the stream ended before message_stop", provider=self.name
            )

    def _error(self, exc: Exception, *, streaming: bool) -> ProviderError:
        name = self.name
        if isinstance(exc, anthropic.APIStatusError) and exc.status_code >= 400:
            detail = short(exc.api_message or exc.message)
            return error_for_status(
                exc.status_code,
                detail,
                provider=name,
                retry_after=parse_retry_after(exc.response.headers),
                auth_hint=self._auth_hint,
            )
        if isinstance(exc, anthropic.APIStatusError):  # an SSE ``error`` event after HTTP 200
            return self._stream_error_event(exc)
        if isinstance(exc, (anthropic.APITimeoutError, httpx2.TimeoutException)):
            return ProviderTimeoutError(f"{name}: no data for {self._timeout_s:g}s", provider=name)
        if streaming:
            return ProviderStreamError(
                f"{name}: the stream broke off: {short(exc) or type(exc).__name__}",
                provider=name,
            )
        where = self._base_url or "api.anthropic.com"
        return ProviderConnectionError(
            f"{name}: cannot connect to {where}: {short(exc.__cause__ or exc)}",
            provider=name,
            help_hint="check the network, or the base_url of this provider",
        )

    def _stream_error_event(self, exc: anthropic.APIStatusError) -> ProviderError:
        kind = exc.type or "error"
        detail = short(exc.api_message or exc.message)
        message = f"{self.name}: the stream reported {kind}: {detail}"
        if kind in _AUTH_ERRORS:
            return ProviderAuthError(message, provider=self.name, help_hint=self._auth_hint)
        if kind in _REQUEST_ERRORS:
            return ProviderRequestError(message, provider=self.name)
        return ProviderStreamError(message, provider=self.name)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
