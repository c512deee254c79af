"""Our chat request as the body of ``POST /v1/responses``.

Sylk keeps the conversation itself, so every request is sent whole and
``store`` is off: nothing depends on a response the server may have dropped.
The system prompt is ``instructions``; the history is a list of input items
(messages, ``function_call`` items for the calls the model made,
``function_call_output`` items for their results, each tied by ``call_id``).

Reasoning is not passed back between requests. Doing that statelessly means
asking for ``reasoning.encrypted_content`` and replaying the reasoning items in
``input``, which needs a content block for opaque vendor items in our history
(and the archive); until that exists the model reasons afresh each request.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, cast

import openai
from openai.types.responses import ResponseInputItemParam, ToolParam

from backend.llm.types import NO_TOOL, ChatRequest, TextBlock, ToolResultBlock, ToolUseBlock

ReasoningSummary = Literal["auto", "on", "off"]
"""Whether to ask for a reasoning summary: ``auto`` for models known to reason."""

# The Responses API refuses a max_output_tokens below 16.
MIN_OUTPUT_TOKENS = 16
# OpenAI's reasoning models: the o-series, GPT-5 (not its -chat models) and the Codex family.
_REASONING_MODEL = re.compile(r"^o\d|^gpt-5(?!.*-chat)|codex", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` reasons before answering (and so refuses ``temperature``)."""
    return bool(_REASONING_MODEL.search(model.rsplit("/", 1)[-1]))


def to_responses_input(request: ChatRequest) -> list[ResponseInputItemParam]:
    """Our messages as input items, in order.

    Tool results come right after the assistant's calls (before any user text of
    the same message). There is no error flag on a ``function_call_output``, so a
    failed tool's result says so in its text, as with Chat Completions.
    """
    items: list[dict[str, Any]] = []
    for message in request.messages:
        texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
        if message.role == "assistant":
            if texts:
                items.append({"type": "message", "role": "assistant", "content": "".join(texts)})
            items.extend(
                {
                    "type": "function_call",
                    "call_id": b.call.id,
                    "name": b.call.name,
                    "arguments": json.dumps(b.call.arguments),
                }
                for b in message.content
                if isinstance(b, ToolUseBlock)
            )
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                output = f"[tool error] {block.content}" if block.is_error else block.content
                call_id = block.tool_call_id
                items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        if texts:
            items.append({"type": "message", "role": "user", "content": "\n\n".join(texts)})
    return cast(list[ResponseInputItemParam], items)


def to_responses_tools(request: ChatRequest) -> list[ToolParam]:
    """Function tools, flat (not nested under ``function`` as in Chat Completions).

    ``strict`` is off: strict mode wants every property required and
    ``additionalProperties: false``, which Sylk's tool schemas do not promise.
    """
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
            "strict": False,
        }
        for t in request.tools
    ]


def create_arguments(
    request: ChatRequest,
    *,
    tool_choice: Literal["auto", "required", "none"],
    reasoning_summary: ReasoningSummary,
) -> dict[str, Any]:
    """The keyword arguments of ``client.responses.create`` for one streamed attempt."""
    opts = request.options
    reasoning = is_reasoning_model(opts.model)
    summary = reasoning_summary == "on" or (reasoning_summary == "auto" and reasoning)
    # A reasoning model refuses temperature ("Unsupported parameter").
    temperature = opts.temperature if opts.temperature is not None and not reasoning else None
    return {
        "model": opts.model,
        "instructions": request.system if request.system else openai.omit,
        "input": to_responses_input(request),
        "tools": to_responses_tools(request) if request.tools else openai.omit,
        "tool_choice": (
            {"type": "function", "name": request.tool_choice}
            if request.tool_choice and request.tool_choice != NO_TOOL
            else (request.tool_choice or tool_choice)
        )
        if request.tools
        else openai.omit,
        "max_output_tokens": max(MIN_OUTPUT_TOKENS, opts.max_tokens),
        "temperature": temperature if temperature is not None else openai.omit,
        "reasoning": {"summary": "auto"} if summary else openai.omit,
        "store": False,
        "stream": True,
    }
