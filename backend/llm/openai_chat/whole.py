"""A whole (unstreamed) Chat Completions reply as the same events a stream gives.

Some servers cannot stream every reply: llama-cpp-python's tool-calling handler
raises after it has sent HTTP 200 when asked to stream a tool call, leaving an
empty stream, while the same request unstreamed returns the call. For such a
server the adapter asks without streaming and plays the reply back through
this module, so the retrying client, the agent loop and the accounting see
exactly what a stream would have given them: reasoning, text, each tool call
started, its arguments and completed (malformed arguments recorded by
``ToolCall.from_raw`` for the loop to send back), usage, the stop reason.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

from openai.types.chat import ChatCompletion, ChatCompletionMessage

from backend.llm._http_errors import short
from backend.llm.errors import ProviderStreamError
from backend.llm.openai_chat.stream import EmptyReplyError, reasoning_text, stop_reason, to_usage
from backend.llm.types import (
    ReasoningDelta,
    StreamEvent,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UsageReported,
)


def _calls(message: ChatCompletionMessage) -> list[tuple[str, str, str]]:
    """(id, name, arguments text) of each function call; the legacy ``function_call``
    only when there are no ``tool_calls`` (llama-cpp-python sends both, the legacy one
    sometimes nameless)."""
    found: list[tuple[str, str, str]] = []
    for call in message.tool_calls or ():
        function = getattr(call, "function", None)  # we offer no custom tools
        if function is None:
            raise ProviderStreamError(f"a tool call that is not a function call: {short(call)}")
        call_id = call.id or f"call_{secrets.token_hex(8)}"
        found.append((call_id, function.name or "", function.arguments or ""))
    legacy = message.function_call
    if not found and legacy is not None and legacy.name:
        found.append((f"call_{secrets.token_hex(8)}", legacy.name, legacy.arguments or ""))
    return found


def completion_events(completion: ChatCompletion) -> Iterator[StreamEvent]:
    """The events of one whole reply, in a stream's order, ending with its stop; a
    reply without a choice is :class:`EmptyReplyError` (its ``provider`` unset)."""
    choice = next((c for c in completion.choices or () if not c.index), None)
    if choice is None:
        raise EmptyReplyError(
            "the server's reply held no choice",
            help_hint="the server's log may say why",
        )
    message = choice.message
    if thought := reasoning_text(message.model_extra or {}):
        yield ReasoningDelta(text=thought)
    if message.content:
        yield TextDelta(text=message.content)
    calls = _calls(message)
    for index, (call_id, name, raw) in enumerate(calls):
        if not name:  # nothing could run it; a stream's nameless call is refused alike
            raise ProviderStreamError(f"tool call {call_id} has no function name")
        yield ToolCallStarted(index=index, id=call_id, name=name)
        if raw:
            yield ToolCallArgsDelta(index=index, fragment=raw)
        yield ToolCallCompleted(index=index, call=ToolCall.from_raw(call_id, name, raw))
    if completion.usage is not None:
        yield UsageReported(usage=to_usage(completion.usage))
    yield StreamStopped(reason=stop_reason(choice.finish_reason, has_calls=bool(calls)))
