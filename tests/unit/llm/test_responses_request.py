"""Building a Responses API request, and which API ``auto`` picks (no network)."""

from __future__ import annotations

import pytest

from backend.llm.openai_responses import is_reasoning_model, wants_responses_api
from backend.llm.openai_responses.request import to_responses_input
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    TextBlock,
    ToolCall,
    ToolResultBlock,
)


@pytest.mark.parametrize(
    ("model", "reasons"),
    [
        ("gpt-5.2-codex", True),
        ("gpt-5.1-codex-mini", True),
        ("gpt-5.2", True),
        ("o4-mini", True),
        ("gpt-5-chat-latest", False),
        ("gpt-4.1", False),
        ("qwen2.5-coder", False),
    ],
)
def test_reasoning_models_are_known_by_name(model: str, reasons: bool) -> None:
    assert is_reasoning_model(model) is reasons


@pytest.mark.parametrize(
    ("model", "base_url", "responses"),
    [
        ("gpt-5.2-codex", None, True),
        ("gpt-5.1-codex-mini", "https://api.openai.com/v1", True),
        ("gpt-5.2", None, False),
        ("gpt-5.2-codex", "http://127.0.0.1:8080/v1", False),  # a local server: Chat
    ],
)
def test_auto_wants_the_responses_api_for_codex_on_openai(
    model: str, base_url: str | None, responses: bool
) -> None:
    assert wants_responses_api(model, base_url) is responses


def test_tool_results_come_before_the_users_words_and_say_when_they_failed() -> None:
    call = ToolCall(id="call_1", name="run", arguments={"cmd": "make"})
    request = ChatRequest(
        messages=[
            ChatMessage.user("build it"),
            ChatMessage.assistant("", [call]),
            ChatMessage(
                role="user",
                content=[
                    TextBlock(text="and then stop"),
                    ToolResultBlock(tool_call_id="call_1", content="exit 2", is_error=True),
                ],
            ),
        ],
        options=ChatOptions(model="gpt-5.2-codex"),
    )
    assert to_responses_input(request) == [
        {"type": "message", "role": "user", "content": "build it"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "run",
            "arguments": '{"cmd": "make"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "[tool error] exit 2"},
        {"type": "message", "role": "user", "content": "and then stop"},
    ]
