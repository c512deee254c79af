"""The OpenAI Chat Completions adapter (OpenAI and OpenAI-compatible servers).

One streamed attempt per :meth:`OpenAIProvider.stream` call on
``openai.AsyncOpenAI`` with the SDK's own retries off. It is lenient about
what compatible servers (Ollama, llama.cpp, vLLM) leave out: no usage chunk,
no tool-call ids, no ``finish_reason`` before the end of the stream, usage
repeated on every chunk. Tool calls arrive as indexed deltas; each is
completed when the choice finishes (or the stream ends) and only if its
accumulated arguments parse as a JSON object.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal, cast

import httpx2
import openai
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionToolUnionParam,
)
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

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

ToolChoice = Literal["auto", "required", "none"]
"""What the model may do with the offered tools; llama-cpp-python ignores tools without it."""

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "error",
}


def to_openai_messages(request: ChatRequest) -> list[ChatCompletionMessageParam]:
    """Our messages as Chat Completions ``messages``.

    Tool results become ``tool`` messages placed right after the assistant turn
    that asked for them (before any user text of the same message); OpenAI has
    no error flag on them, so a failed tool's result says so in its content.
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
        if message.role == "assistant":
            calls = [
                {
                    "id": b.call.id,
                    "type": "function",
                    "function": {"name": b.call.name, "arguments": json.dumps(b.call.arguments)},
                }
                for b in message.content
                if isinstance(b, ToolUseBlock)
            ]
            # "" rather than null: llama-cpp-python answers a null content with HTTP 500.
            entry: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
            if calls:
                entry["tool_calls"] = calls
            if texts or calls:
                out.append(entry)
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                content = f"[tool error] {block.content}" if block.is_error else block.content
                out.append({"role": "tool", "tool_call_id": block.tool_call_id, "content": content})
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return cast(list[ChatCompletionMessageParam], out)


def to_openai_tools(request: ChatRequest) -> list[ChatCompletionToolUnionParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in request.tools
    ]


def _usage(raw: CompletionUsage) -> Usage:
    prompt = raw.prompt_tokens or 0
    details = raw.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    # OpenAI counts cached tokens inside prompt_tokens; ours are disjoint.
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=raw.completion_tokens or 0,
        cache_read_tokens=cached,
    )


def _detail(exc: Exception) -> str:
    body = exc.body if isinstance(exc, openai.APIError) else None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return short(message)
        problems = body.get("detail")  # FastAPI's 422: [{"loc": [...], "msg": ...}, ...]
        if isinstance(problems, list) and problems:
            return short("; ".join(_problem(p) for p in problems))
    return short(exc)


def _problem(problem: object) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    where = ".".join(str(part) for part in problem.get("loc") or ())
    message = str(problem.get("msg", problem))
    return f"{where}: {message}" if where else message


def _refused(exc: Exception) -> bool:
    """An error chunk saying our request is wrong (e.g. the context is too long)."""
    if not isinstance(exc, openai.APIError) or not isinstance(exc.body, dict):
        return False
    kind, code = exc.body.get("type"), exc.body.get("code")
    return kind == "invalid_request_error" or code == "context_length_exceeded"


class _PendingCall:
    __slots__ = ("args", "id", "name", "started")

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        self.name = ""
        self.args: list[str] = []
        self.started = False


class _Translation:
    """Chat completion chunks to our events, for one attempt."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.finish: str | None = None
        self._calls: dict[int, _PendingCall] = {}
        self._completed = False

    def feed(self, chunk: ChatCompletionChunk) -> Iterator[StreamEvent]:
        if chunk.usage is not None:  # servers that repeat it send running totals
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices or ():
            if choice.index:  # only the first choice is ours
                continue
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    yield TextDelta(text=delta.content)
                for position, raw in enumerate(delta.tool_calls or ()):
                    yield from self._tool_delta(raw, position)
            if choice.finish_reason:
                self.finish = choice.finish_reason
                yield from self.complete_calls()

    def _tool_delta(self, raw: ChoiceDeltaToolCall, position: int) -> Iterator[StreamEvent]:
        index = raw.index if raw.index is not None else position
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PendingCall(raw.id or f"call_{secrets.token_hex(8)}")
        elif raw.id and not call.started:
            call.id = raw.id
        function = raw.function
        if function is not None and function.name and not call.name:
            call.name = function.name
        fragment = function.arguments if function is not None else None
        if fragment:
            call.args.append(fragment)
        if not call.started and call.name:
            call.started = True
            yield ToolCallStarted(index=index, id=call.id, name=call.name)
            if call.args:  # fragments that came before the name
                yield ToolCallArgsDelta(index=index, fragment="".join(call.args))
        elif call.started and fragment:
            yield ToolCallArgsDelta(index=index, fragment=fragment)

    def complete_calls(self) -> Iterator[StreamEvent]:
        if self._completed:
            return
        self._completed = True
        for index in sorted(self._calls):
            call = self._calls[index]
            raw = "".join(call.args)
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                arguments = None
            if not call.name or not isinstance(arguments, dict):
                why = f"finish_reason={self.finish}" if self.finish else "the stream ended"
                raise ProviderStreamError(
                    f"tool call {call.name or '?'} ({call.id}) has incomplete arguments "
                    f"({why}): {short(raw, 80)}"
                )
            yield ToolCallCompleted(
                index=index, call=ToolCall(id=call.id, name=call.name, arguments=arguments)
            )

    def stop_reason(self) -> StopReason:
        if self._calls and self.finish in (None, "stop"):
            return "tool_use"  # Ollama and others say "stop" after a tool call
        return _STOP_REASONS.get(self.finish or "stop", "end_turn")


class OpenAIProvider:
    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        name: str = "openai",
        timeout_s: float = 60.0,
        tool_choice: ToolChoice = "auto",
    ) -> None:
        self.name = name
        self._tool_choice: ToolChoice = tool_choice
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._client: openai.AsyncOpenAI | None = None
        # api.openai.com wants max_completion_tokens; compatible servers know max_tokens.
        self._native = base_url is None or "api.openai.com" in base_url

    @property
    def _auth_hint(self) -> str:
        return (
            f"set OPENAI_API_KEY or [providers.{self.name}] api_key in the Sylk config; "
            f"for a local server check [providers.{self.name}] base_url"
        )

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
        opts = request.options
        client = self._sdk()
        limit = opts.max_tokens
        try:
            stream = await client.chat.completions.create(
                model=opts.model,
                messages=to_openai_messages(request),
                tools=to_openai_tools(request) if request.tools else openai.omit,
                tool_choice=self._tool_choice if request.tools else openai.omit,
                temperature=opts.temperature if opts.temperature is not None else openai.omit,
                max_completion_tokens=limit if self._native else openai.omit,
                max_tokens=openai.omit if self._native else limit,
                stream=True,
                stream_options={"include_usage": True},
            )
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise self._error(exc, streaming=False) from exc
        translation = _Translation()
        try:
            while True:
                try:
                    chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (openai.OpenAIError, httpx2.HTTPError, ValueError) as exc:
                    raise self._error(exc, streaming=True) from exc
                try:
                    for event in translation.feed(chunk):
                        yield event
                except ProviderStreamError as exc:
                    exc.provider = self.name
                    raise
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

    def _error(self, exc: Exception, *, streaming: bool) -> ProviderError:
        name = self.name
        if isinstance(exc, openai.APIStatusError) and exc.status_code >= 400:
            return error_for_status(
                exc.status_code,
                _detail(exc),
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
        if streaming and _refused(exc):  # an error chunk no retry can fix
            return ProviderRequestError(
                f"{name}: the stream reported an error: {_detail(exc)}", provider=name
            )
        if streaming:  # an error chunk, a reset or garbage after HTTP 200
            return ProviderStreamError(
                f"{name}: the stream broke off: {short(exc) or type(exc).__name__}",
                provider=name,
            )
        return ProviderStreamError(f"{name}: unexpected reply: {short(exc)}", provider=name)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
