"""The stub's ``POST /v1/responses``: OpenAI's Responses API, streamed as the real one is.

A :class:`~tests.stubs.llm_script.Reply` renders as the real event sequence:
``response.created``, ``response.in_progress``, then one output item after
another (a reasoning summary when the request asked for one, the message text,
each function call), each ``added``, its deltas and ``done`` events, and a
terminal ``response.completed`` carrying the usage, every event numbered by
``sequence_number``. A reply whose ``stop_reason`` is ``"max_output_tokens"``
ends with ``response.incomplete`` instead; :class:`ResponsesReply` adds a
reasoning summary and a ``response.failed`` ending.

The stub is as strict as the real API on what Sylk could get wrong
(:func:`responses_rejection`): a ``max_output_tokens`` below 16, ``temperature``
for a reasoning model, Chat-shaped (nested) tools, and a ``function_call_output``
whose ``call_id`` no ``function_call`` in the input carries, each answer HTTP 400
with the API's own error body.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from tests.stubs.llm_script import EventKind, Reply, StreamFault, sse

Delta = tuple[EventKind, str, dict[str, Any]]
"""One delta event of an output item: its kind for the fault counters, name and fields."""
_REASONING_MODEL = re.compile(r"^o\d|^gpt-5(?!.*-chat)|codex", re.IGNORECASE)


@dataclass
class ResponsesReply(Reply):
    """A Reply with what only the Responses API has."""

    # Streamed as a reasoning summary when the request sets reasoning.summary.
    reasoning: list[str] = field(default_factory=list)
    # End with response.failed carrying this error code (and ``failure_message``).
    failure_code: str | None = None
    failure_message: str = "The model failed to generate a response."


def _invalid(message: str, param: str | None, code: str) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def responses_rejection(body: object) -> dict[str, Any] | None:
    """The HTTP 400 body the real API answers ``body`` with, or None when it passes."""
    if not isinstance(body, dict):
        return _invalid("We could not parse the JSON body of your request.", None, "invalid_json")
    limit = body.get("max_output_tokens")
    if isinstance(limit, int) and limit < 16:
        return _invalid(
            "Invalid 'max_output_tokens': integer below minimum value. "
            f"Expected a value >= 16, but got {limit} instead.",
            "max_output_tokens",
            "integer_below_min_value",
        )
    model = str(body.get("model", ""))
    if body.get("temperature") is not None and _REASONING_MODEL.search(model):
        return _invalid(
            "Unsupported parameter: 'temperature' is not supported with this model.",
            "temperature",
            "unsupported_parameter",
        )
    for n, tool in enumerate(body.get("tools") or ()):
        if isinstance(tool, dict) and tool.get("type") == "function" and "name" not in tool:
            return _invalid(
                f"Missing required parameter: 'tools[{n}].name'.",
                f"tools[{n}].name",
                "missing_required_parameter",
            )
    called: set[str] = set()
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "function_call":
            called.add(str(item.get("call_id")))
        elif kind == "function_call_output" and str(item.get("call_id")) not in called:
            return _invalid(
                f"No tool call found for function call output with call_id {item.get('call_id')}.",
                "input",
                "invalid_value",
            )
    return None


def responses_stream_error(fault: StreamFault) -> bytes:
    """The ``error`` event the API sends when a stream fails part-way."""
    body = {
        "type": "error",
        "code": fault.error_type,
        "message": fault.message,
        "param": None,
        "sequence_number": 0,
    }
    return sse(body, event="error")


class _Render:
    """One reply's events, numbered as they are made."""

    def __init__(self, reply: Reply, model: str, body: dict[str, Any]) -> None:
        self.reply = reply
        self.model = model
        self.body = body
        self.events: list[tuple[EventKind, bytes]] = []
        self.output: list[dict[str, Any]] = []
        self.created = int(time.time())

    def emit(self, kind: EventKind, name: str, **fields: Any) -> None:
        data = {"type": name, "sequence_number": len(self.events), **fields}
        self.events.append((kind, sse(data, event=name)))

    def response(self, status: str, **extra: Any) -> dict[str, Any]:
        return {
            "id": "resp_stub",
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": list(self.output),
            "parallel_tool_calls": True,
            "tool_choice": self.body.get("tool_choice", "auto"),
            "tools": self.body.get("tools", []),
            "store": self.body.get("store", True),
            "max_output_tokens": self.body.get("max_output_tokens"),
            "error": None,
            "incomplete_details": None,
            "usage": None,
            **extra,
        }

    def item(
        self,
        item: dict[str, Any],
        deltas: list[Delta],
        done: list[tuple[str, dict[str, Any]]],
        final: dict[str, Any],
    ) -> None:
        index = len(self.output)
        self.emit("meta", "response.output_item.added", output_index=index, item=item)
        for kind, name, fields in deltas:
            self.emit(kind, name, output_index=index, item_id=item["id"], **fields)
        for name, fields in done:
            self.emit("meta", name, output_index=index, item_id=item["id"], **fields)
        self.emit("meta", "response.output_item.done", output_index=index, item=final)
        self.output.append(final)


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    total_in = u.input_tokens + u.cache_read_tokens
    return {
        "input_tokens": total_in,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total_in + u.output_tokens,
    }


def _reasoning_item(r: _Render, pieces: list[str]) -> None:
    text = "".join(pieces)
    where = {"summary_index": 0}
    deltas: list[Delta] = [
        ("meta", "response.reasoning_summary_text.delta", {**where, "delta": d}) for d in pieces
    ]
    part = {"type": "summary_text", "text": text}
    r.item(
        {"id": "rs_stub", "type": "reasoning", "summary": []},
        deltas,
        [
            ("response.reasoning_summary_text.done", {**where, "text": text}),
            ("response.reasoning_summary_part.done", {**where, "part": part}),
        ],
        {"id": "rs_stub", "type": "reasoning", "summary": [part]},
    )


def _message_item(r: _Render, pieces: list[str]) -> None:
    text = "".join(pieces)
    where = {"content_index": 0}
    deltas: list[Delta] = [
        ("text", "response.output_text.delta", {**where, "delta": d, "logprobs": []})
        for d in pieces
    ]
    part = {"type": "output_text", "text": text, "annotations": []}
    message = {"id": "msg_stub", "type": "message", "role": "assistant"}
    r.item(
        {**message, "status": "in_progress", "content": []},
        deltas,
        [
            ("response.output_text.done", {**where, "text": text, "logprobs": []}),
            ("response.content_part.done", {**where, "part": part}),
        ],
        {**message, "status": "completed", "content": [part]},
    )


def _render(reply: Reply, model: str, body: dict[str, Any]) -> _Render:
    r = _Render(reply, model, body)
    r.emit("meta", "response.created", response=r.response("in_progress"))
    r.emit("meta", "response.in_progress", response=r.response("in_progress"))
    summary = (body.get("reasoning") or {}).get("summary")
    if isinstance(reply, ResponsesReply) and reply.reasoning and summary:
        _reasoning_item(r, reply.reasoning)
    if reply.text:
        _message_item(r, reply.text)
    for n, call in enumerate(reply.tool_calls):
        head = {"id": f"fc_stub{n:02d}", "type": "function_call",
                "call_id": call.id or f"call_stub{n:02d}", "name": call.name}  # fmt: skip
        pieces = call.fragments()
        whole = "".join(pieces)
        # The last item of a response cut at max_output_tokens ends incomplete.
        cut = reply.stop_reason == "max_output_tokens" and n == len(reply.tool_calls) - 1
        deltas: list[Delta] = [
            ("args", "response.function_call_arguments.delta", {"delta": p}) for p in pieces
        ]
        r.item(
            {**head, "status": "in_progress", "arguments": ""},
            deltas,
            [("response.function_call_arguments.done", {"arguments": whole})],
            {**head, "status": "incomplete" if cut else "completed", "arguments": whole},
        )
    usage = _usage(reply) if reply.include_usage else None
    if isinstance(reply, ResponsesReply) and reply.failure_code:
        error = {"code": reply.failure_code, "message": reply.failure_message}
        r.emit("meta", "response.failed", response=r.response("failed", error=error, usage=usage))
    elif reply.stop_reason == "max_output_tokens":
        details = {"reason": "max_output_tokens"}
        final = r.response("incomplete", incomplete_details=details, usage=usage)
        r.emit("meta", "response.incomplete", response=final)
    else:
        r.emit("meta", "response.completed", response=r.response("completed", usage=usage))
    return r


def responses_events(
    reply: Reply, model: str, body: dict[str, Any]
) -> list[tuple[EventKind, bytes]]:
    """The SSE events of ``reply`` as an answer to the request ``body``."""
    return _render(reply, model, body).events


def responses_whole(reply: Reply, model: str, body: dict[str, Any]) -> dict[str, Any]:
    """The non-streaming body: the final response object."""
    last = _render(reply, model, body).events[-1][1]
    data = json.loads(last.decode().split("data: ", 1)[1])
    return dict(data["response"])
