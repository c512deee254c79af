"""Responses API stream events to our vendor-neutral events, for one attempt.

The stream is a sequence of typed events (``response.created``, output items
added and done, text and argument deltas, and one terminal event:
``response.completed``, ``response.incomplete`` or ``response.failed``; an
``error`` event may come instead). Only the parts Sylk uses are translated:
answer text (a refusal is shown as text), function calls, the reasoning summary
(kept apart as :class:`ReasoningDelta`), usage and why the response stopped.
Hosted tools, images and audio are never asked for and are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator

from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseStreamEvent,
    ResponseUsage,
)

from backend.llm._http_errors import short
from backend.llm.errors import (
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderStreamError,
)
from backend.llm.types import (
    ReasoningDelta,
    StopReason,
    StreamEvent,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    Usage,
    UsageReported,
)

_TEXT = frozenset({"response.output_text.delta", "response.refusal.delta"})
_REASONING = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})
# Error codes no retry can fix: the request (prompt, image, policy) is the problem.
_REFUSED_CODES = frozenset(
    {
        "invalid_prompt",
        "invalid_request_error",
        "context_length_exceeded",
        "bio_policy",
        "misalignment_policy_violation",
        "data_residency_mismatch",
    }
)


def usage_of(raw: ResponseUsage) -> Usage:
    """Usage with disjoint buckets: OpenAI counts cached tokens inside ``input_tokens``."""
    details = raw.input_tokens_details
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    written = (getattr(details, "cache_write_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=max(0, (raw.input_tokens or 0) - cached - written),
        output_tokens=raw.output_tokens or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def failure(code: str | None, message: str, *, provider: str) -> ProviderError:
    """The typed error for an ``error`` event or a failed response."""
    said = short(message or "no message")
    what = f"{provider}: the response failed ({code or 'no code'}): {said}"
    if code == "rate_limit_exceeded":
        return ProviderRateLimitError(
            what, provider=provider, help_hint="Sylk retries after a pause"
        )
    if code is not None and (code in _REFUSED_CODES or "image" in code or "invalid" in code):
        return ProviderRequestError(
            what,
            provider=provider,
            help_hint="the provider cannot accept this request; retrying will not help",
        )
    return ProviderStreamError(what, provider=provider)


class _Call:
    __slots__ = ("args", "cut", "final", "id", "index", "name")

    def __init__(self, index: int, call_id: str, name: str) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.args: list[str] = []
        self.final: str | None = None  # the arguments a *.done event gave
        self.cut = False  # its item ended "incomplete"


class ResponsesTranslation:
    """Feeds on one attempt's events; :meth:`finish` ends it with usage and a stop."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self._calls: dict[int, _Call] = {}  # by output_index
        self._final: Response | None = None

    def feed(self, event: ResponseStreamEvent) -> Iterator[StreamEvent]:
        kind = event.type
        if kind in _TEXT:
            delta = getattr(event, "delta", "")
            if delta:
                yield TextDelta(text=delta)
        elif kind in _REASONING:
            delta = getattr(event, "delta", "")
            if delta:
                yield ReasoningDelta(text=delta)
        elif event.type == "response.output_item.added":
            if isinstance(event.item, ResponseFunctionToolCall):
                yield from self._start(event.output_index, event.item)
        elif event.type == "response.function_call_arguments.delta":
            call = self._calls.get(event.output_index)
            if call is not None and call.final is None and event.delta:
                call.args.append(event.delta)
                yield ToolCallArgsDelta(index=call.index, fragment=event.delta)
        elif event.type == "response.function_call_arguments.done":
            call = self._calls.get(event.output_index)
            if call is not None:
                call.final = event.arguments
        elif event.type == "response.output_item.done":
            if isinstance(event.item, ResponseFunctionToolCall):
                item = event.item
                call = self._calls.get(event.output_index)
                if call is None:  # a server that skipped output_item.added
                    yield from self._start(event.output_index, item)
                    call = self._calls[event.output_index]
                call.final = item.arguments
                call.cut = item.status == "incomplete"
        elif isinstance(event, (ResponseCompletedEvent, ResponseIncompleteEvent)):
            self._final = event.response
        elif event.type == "response.failed":
            error = event.response.error
            raise failure(
                error.code if error is not None else None,
                error.message if error is not None else "the response failed",
                provider=self.provider,
            )
        elif event.type == "error":
            raise failure(event.code, event.message, provider=self.provider)

    def _start(self, output_index: int, item: ResponseFunctionToolCall) -> Iterator[StreamEvent]:
        if output_index in self._calls:
            return
        call = _Call(len(self._calls), item.call_id, item.name)
        self._calls[output_index] = call
        yield ToolCallStarted(index=call.index, id=call.id, name=call.name)
        if item.arguments:  # some servers send them whole with the item
            call.args.append(item.arguments)
            yield ToolCallArgsDelta(index=call.index, fragment=item.arguments)

    def _complete(self, call: _Call, *, cut: bool) -> ToolCallCompleted:
        """The finished call. Arguments the model finished badly are recorded on it (the
        agent loop sends the error back); a call the response cut off raises instead."""
        text = call.final if call.final is not None else "".join(call.args)
        done = ToolCall.from_raw(call.id, call.name, text)
        if (cut or call.cut) and done.arguments_error:
            raise ProviderStreamError(
                f"{self.provider}: tool call {call.name} ({call.id}) was cut off with "
                f"incomplete arguments: {short(text, 80)}",
                provider=self.provider,
            )
        return ToolCallCompleted(index=call.index, call=done)

    def finish(self) -> Iterator[StreamEvent]:
        """After the last event: usage and the stop reason, or an error if it never ended."""
        final = self._final
        if final is None:
            raise ProviderStreamError(
                f"{self.provider}: the stream ended before the response was complete",
                provider=self.provider,
            )
        # Calls complete here, once it is known whether the response was cut short.
        cut = final.status == "incomplete"
        for call in self._calls.values():
            yield self._complete(call, cut=cut)
        if final.usage is not None:
            yield UsageReported(usage=usage_of(final.usage))
        yield StreamStopped(reason=self._stop_reason(final))

    def _stop_reason(self, final: Response) -> StopReason:
        if final.status == "incomplete":
            details = final.incomplete_details
            reason = details.reason if details is not None else None
            return "error" if reason == "content_filter" else "max_tokens"
        return "tool_use" if self._calls else "end_turn"
