"""Chat Completions stream chunks translated to our stream events, for one attempt.

Lenient about what compatible servers (Ollama, llama.cpp, vLLM) leave out: no
usage chunk, no tool-call ids, no ``finish_reason`` before the end of the
stream, usage repeated on every chunk. Tool calls arrive as indexed deltas;
each is completed when the choice finishes (or the stream ends) and only if
its accumulated arguments parse as a JSON object.

Not lenient about a stream that carried no reply at all (no chunk, or neither
text, a tool call nor a finish reason): that is a server that failed after its
HTTP 200 was out (llama-cpp-python asked to stream a tool call), never an empty
answer. See :class:`EmptyReplyError`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from typing import Any

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from backend.llm._http_errors import short
from backend.llm.errors import ProviderStreamError
from backend.llm.openai_chat.profiles import REASONING_FIELDS
from backend.llm.types import (
    ReasoningDelta,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
)

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "error",
}


class EmptyReplyError(ProviderStreamError):
    """HTTP 200, then a stream that ended without a reply (or a reply without a choice).

    Not retried: the server ended the stream cleanly, as it does when its handler
    raised after the headers were sent, and such a handler fails the same way for
    the same request every time (llama-cpp-python's streamed tool call does, on
    every attempt). A retry would only make a slow local server read the whole
    prompt again (10-40 s on a laptop CPU) to fail the same way; a cut connection
    (a reset, a stall) is a different error and still retried.
    """

    retryable = False


def empty_reply(provider: str, profile: str, chunks: int) -> EmptyReplyError:
    """The error for a stream that carried ``chunks`` chunks and no reply."""
    what = "no chunk" if not chunks else f"{chunks} chunk(s) but no text, tool call or finish"
    hint = "the server failed after answering HTTP 200: its log says why"
    if profile in ("llama-cpp", "generic"):
        hint += (
            f"; llama-cpp-python cannot stream tool calls: set [providers.{provider}] "
            'profile = "llama-cpp-python" so Sylk asks it without streaming'
        )
    return EmptyReplyError(
        f"{provider}: the server ended the stream without a reply ({what})",
        provider=provider,
        help_hint=hint,
    )


def to_usage(raw: CompletionUsage) -> Usage:
    prompt = raw.prompt_tokens or 0
    details = raw.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    # OpenAI counts cached tokens inside prompt_tokens; ours are disjoint.
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=raw.completion_tokens or 0,
        cache_read_tokens=cached,
    )


class _PendingCall:
    __slots__ = ("args", "id", "name", "started")

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        self.name = ""
        self.args: list[str] = []
        self.started = False


def reasoning_text(extra: Mapping[str, Any]) -> str:
    """The reasoning a server sends beside the answer (never part of it), from a
    delta's or a message's extra fields; the first field that has some, since
    proxies may repeat it under both names."""
    for field in REASONING_FIELDS:
        value = extra.get(field)
        if isinstance(value, str) and value:
            return value
    return ""


class Translation:
    """Chat completion chunks to our events, for one attempt."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.finish: str | None = None
        self._calls: dict[int, _PendingCall] = {}
        self._completed = False
        self.chunks = 0
        self._said = False  # text or a tool call came

    @property
    def replied(self) -> bool:
        """Whether the stream carried a reply: text, a tool call or a finish reason
        (an empty answer the server finished is still an answer)."""
        return self._said or bool(self._calls) or self.finish is not None

    def feed(self, chunk: ChatCompletionChunk) -> Iterator[StreamEvent]:
        self.chunks += 1
        if chunk.usage is not None:  # servers that repeat it send running totals
            self.usage = to_usage(chunk.usage)
        for choice in chunk.choices or ():
            if choice.index:  # only the first choice is ours
                continue
            delta = choice.delta
            if delta is not None:
                if thought := reasoning_text(delta.model_extra or {}):
                    yield ReasoningDelta(text=thought)
                if delta.content:
                    self._said = True
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
            done = ToolCall.from_raw(call.id, call.name, raw)
            # Arguments the model finished badly go back to it (agents.loop); without a
            # finish reason the stream was cut, and half a call is never returned.
            if not call.name or (done.arguments_error and self.finish is None):
                why = f"finish_reason={self.finish}" if self.finish else "the stream ended"
                raise ProviderStreamError(
                    f"tool call {call.name or '?'} ({call.id}) has incomplete arguments "
                    f"({why}): {short(raw, 80)}"
                )
            yield ToolCallCompleted(index=index, call=done)

    def stop_reason(self) -> StopReason:
        return stop_reason(self.finish, has_calls=bool(self._calls))


def stop_reason(finish: str | None, *, has_calls: bool) -> StopReason:
    """Our stop reason for a server's ``finish_reason``."""
    if has_calls and finish in (None, "stop"):
        return "tool_use"  # Ollama and others say "stop" after a tool call
    return _STOP_REASONS.get(finish or "stop", "end_turn")
