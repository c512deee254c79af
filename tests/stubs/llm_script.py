"""What the LLM stub answers: scripted replies and faults, rendered per vendor.

A script is a queue of items. Each request to ``/v1/messages`` (Anthropic) or
``/v1/chat/completions`` (OpenAI) takes the next one:

* :class:`Reply` - a normal answer (text chunks, tool calls whose JSON
  arguments are split across deltas, usage), optionally with a
  :class:`StreamFault` part-way through the stream;
* :class:`Status` - an HTTP error (429 with ``retry-after``, 500, 503, 529, 401...);
* :class:`Drop` - accept the request, then close the socket without answering;
* :class:`Stall` - accept the request and send nothing at all.

The same item renders as Anthropic SSE or OpenAI chunks, depending on the path.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

Vendor = Literal["anthropic", "openai", "responses"]  # responses: see responses_stub
EventKind = Literal["meta", "text", "args"]


@dataclass
class StubUsage:
    input_tokens: int = 12
    output_tokens: int = 7
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class StubToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    # Sent verbatim instead of ``arguments`` (for invalid or truncated JSON).
    raw_arguments: str | None = None
    id: str | None = None
    pieces: int = 3

    def fragments(self) -> list[str]:
        text = self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments)
        if not text:
            return []
        size = max(1, -(-len(text) // max(1, self.pieces)))
        return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class StreamFault:
    """Something that goes wrong after HTTP 200, once a threshold is reached.

    ``reset`` aborts the socket mid-body; ``error`` sends the vendor's stream
    error event; ``stall`` holds the connection without sending (until the
    client leaves or ``stall_s`` passes); ``end`` ends the body cleanly early
    (OpenAI: with ``data: [DONE]``). The fault fires before the first event
    at which any given threshold is met: ``after_events`` events sent,
    ``after_text`` text deltas sent or ``after_args`` argument fragments sent.
    """

    kind: Literal["reset", "error", "stall", "end"]
    after_events: int | None = None
    after_text: int | None = None
    after_args: int | None = None
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    stall_s: float = 30.0

    def due(self, events: int, texts: int, args: int) -> bool:
        return (
            (self.after_events is not None and events >= self.after_events)
            or (self.after_text is not None and texts >= self.after_text)
            or (self.after_args is not None and args >= self.after_args)
        )


@dataclass
class Reply:
    text: list[str] = field(default_factory=list)
    tool_calls: list[StubToolCall] = field(default_factory=list)
    usage: StubUsage = field(default_factory=StubUsage)
    stop_reason: str | None = None  # vendor's own word; derived when None
    delay_s: float = 0.0  # between stream events
    fault: StreamFault | None = None
    include_usage: bool = True  # OpenAI: send the usage chunk (when asked for)
    omit_ids: bool = False  # OpenAI: tool calls without ids
    omit_finish_reason: bool = False  # OpenAI: finish_reason stays null


@dataclass
class Status:
    status: int
    retry_after: float | str | None = None
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Drop:
    """Close the connection without answering; ``rst`` sends a TCP reset."""

    rst: bool = False


@dataclass
class Stall:
    """Hold the connection without sending even a status line."""

    seconds: float = 30.0


Item = Reply | Status | Drop | Stall


def text_reply(*chunks: str, **kwargs: Any) -> Reply:
    return Reply(text=list(chunks), **kwargs)


def tool_reply(*calls: StubToolCall, text: tuple[str, ...] = (), **kwargs: Any) -> Reply:
    return Reply(text=list(text), tool_calls=list(calls), **kwargs)


def burst(*statuses: int, retry_after: float | None = None) -> list[Item]:
    return [Status(s, retry_after=retry_after) for s in statuses]


# -- errors -----------------------------------------------------------------------
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_body(vendor: Vendor, status: int, message: str) -> dict[str, Any]:
    text = message or f"stub error {status}"
    if vendor == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": text}}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": text, "type": kind, "param": None, "code": None}}


def llama_cpp_rejection(body: object) -> dict[str, Any] | None:
    """What llama-cpp-python (0.3.x) answers, with HTTP 500, to an assistant message whose
    content is null; None when the request passes. Its pydantic error is wrapped as an
    internal server error, which is why the status alone says "retry"."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for n, message in enumerate(messages if isinstance(messages, list) else ()):
        refused = isinstance(message, dict) and message.get("role") == "assistant"
        if refused and "content" in message and message["content"] is None:
            text = (
                "1 validation error for ChatCompletionRequestAssistantMessage\n"
                f"messages.{n}.content\n  Input should be a valid string "
                "[type=string_type, input_value=None, input_type=NoneType]"
            )
            return {"error": {"message": text, "type": "internal_server_error",
                                  "param": None, "code": None}}  # fmt: skip
    return None


def stream_error(vendor: Vendor, fault: StreamFault) -> bytes:
    if vendor == "anthropic":
        body = {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
        return sse(body, event="error")
    return sse({"error": {"message": fault.message, "type": fault.error_type, "code": None}})


# -- rendering --------------------------------------------------------------------
def sse(data: dict[str, Any] | str, *, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _call_id(vendor: Vendor, call: StubToolCall, n: int) -> str:
    return call.id or (f"toolu_stub{n:02d}" if vendor == "anthropic" else f"call_stub{n:02d}")


def anthropic_events(reply: Reply, model: str) -> list[tuple[EventKind, bytes]]:
    u = reply.usage
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": u.input_tokens,
                "output_tokens": 1,
                "cache_read_input_tokens": u.cache_read_tokens,
                "cache_creation_input_tokens": u.cache_write_tokens,
            },
        },
    }
    out: list[tuple[EventKind, bytes]] = [("meta", sse(start, event="message_start"))]
    index = 0
    if reply.text:
        block = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        out.append(("meta", sse(block, event="content_block_start")))
        for chunk in reply.text:
            delta = {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": chunk},
            }
            out.append(("text", sse(delta, event="content_block_delta")))
        out.append(
            ("meta", sse({"type": "content_block_stop", "index": 0}, event="content_block_stop"))
        )
        index = 1
    for n, call in enumerate(reply.tool_calls):
        tool = {
            "type": "tool_use",
            "id": _call_id("anthropic", call, n),
            "name": call.name,
            "input": {},
        }
        start_block = {"type": "content_block_start", "index": index, "content_block": tool}
        out.append(("meta", sse(start_block, event="content_block_start")))
        for fragment in call.fragments():
            delta = {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
            out.append(("args", sse(delta, event="content_block_delta")))
        out.append(
            (
                "meta",
                sse({"type": "content_block_stop", "index": index}, event="content_block_stop"),
            )
        )
        index += 1
    stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": u.output_tokens},
    }
    out.append(("meta", sse(end, event="message_delta")))
    out.append(("meta", sse({"type": "message_stop"}, event="message_stop")))
    return out


def openai_events(reply: Reply, model: str, include_usage: bool) -> list[tuple[EventKind, bytes]]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }
        return sse(body)

    out: list[tuple[EventKind, bytes]] = [("meta", chunk({"role": "assistant", "content": ""}))]
    out.extend(("text", chunk({"content": piece})) for piece in reply.text)
    for n, call in enumerate(reply.tool_calls):
        head: dict[str, Any] = {
            "index": n,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        if not reply.omit_ids:
            head["id"] = _call_id("openai", call, n)
        out.append(("meta", chunk({"tool_calls": [head]})))
        for fragment in call.fragments():
            part = {"index": n, "function": {"arguments": fragment}}
            out.append(("args", chunk({"tool_calls": [part]})))
    if not reply.omit_finish_reason:
        finish = reply.stop_reason or ("tool_calls" if reply.tool_calls else "stop")
        out.append(("meta", chunk({}, finish)))
    if include_usage and reply.include_usage:
        out.append(("meta", sse(_openai_usage_chunk(reply, model, created))))
    out.append(("meta", sse("[DONE]")))
    return out


def _openai_usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input_tokens + u.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens},
    }


def _openai_usage_chunk(reply: Reply, model: str, created: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": _openai_usage(reply),
    }


def whole_reply(vendor: Vendor, reply: Reply, model: str) -> dict[str, Any]:
    """The non-streaming JSON body for ``reply``."""
    text = "".join(reply.text)
    if vendor == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for n, call in enumerate(reply.tool_calls):
            content.append(
                {
                    "type": "tool_use",
                    "id": _call_id(vendor, call, n),
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        u = reply.usage
        return {
            "id": "msg_stub",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn"),
            "stop_sequence": None,
            "usage": {
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_input_tokens": u.cache_read_tokens,
                "cache_creation_input_tokens": u.cache_write_tokens,
            },
        }
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(vendor, call, n),
                "type": "function",
                "function": {"name": call.name, "arguments": "".join(call.fragments())},
            }
            for n, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": reply.stop_reason
                or ("tool_calls" if reply.tool_calls else "stop"),
            }
        ],
        "usage": _openai_usage(reply),
    }
