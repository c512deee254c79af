"""Our vendor-neutral request as Chat Completions ``messages`` and ``tools``."""

from __future__ import annotations

import json
from typing import Any, cast

from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolUnionParam

from backend.llm.types import ChatRequest, TextBlock, ToolResultBlock, ToolUseBlock


def to_openai_messages(
    request: ChatRequest, *, null_content: bool = False
) -> list[ChatCompletionMessageParam]:
    """Our messages as Chat Completions ``messages``.

    Tool results become ``tool`` messages placed right after the assistant turn
    that asked for them (before any user text of the same message); OpenAI has
    no error flag on them, so a failed tool's result says so in its content.
    An assistant message that only calls tools carries ``"content": ""`` unless
    the server's profile allows null (llama-cpp-python answers null with a 500).
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
            text = "".join(texts)
            entry: dict[str, Any] = {
                "role": "assistant",
                "content": None if null_content and calls and not text else text,
            }
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
