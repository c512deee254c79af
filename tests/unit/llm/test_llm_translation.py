"""Request translation and HTTP error mapping, without a network."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from backend.llm._http_errors import error_for_status, parse_retry_after
from backend.llm.anthropic_adapter import to_anthropic_messages
from backend.llm.errors import (
    ProviderAuthError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from backend.llm.openai_chat import to_openai_messages
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    TextBlock,
    ToolCall,
    ToolResultBlock,
)


def conversation() -> ChatRequest:
    calls = [
        ToolCall(id="c1", name="read_file", arguments={"path": "a"}),
        ToolCall(id="c2", name="run", arguments={"cmd": "ls"}),
    ]
    return ChatRequest(
        system="sys",
        messages=[
            ChatMessage.user("go"),
            ChatMessage.assistant("", calls),
            ChatMessage(
                role="user",
                content=[
                    ToolResultBlock(tool_call_id="c1", content="A"),
                    ToolResultBlock(tool_call_id="c2", content="boom", is_error=True),
                    TextBlock(text=""),
                ],
            ),
        ],
        options=ChatOptions(model="m"),
    )


def test_openai_gets_one_tool_message_per_result_right_after_the_calls() -> None:
    messages = to_openai_messages(conversation())
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assistant = messages[2]
    assert assistant.get("content") == ""  # llama-cpp-python refuses null (issue 14)
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]  # type: ignore[typeddict-item]
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "A"}
    assert messages[4] == {"role": "tool", "tool_call_id": "c2", "content": "[tool error] boom"}


def test_anthropic_keeps_results_in_the_user_turn_and_drops_empty_text() -> None:
    messages = to_anthropic_messages(conversation())
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["tool_use", "tool_use"]  # type: ignore[index,union-attr]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "A"},
        {"type": "tool_result", "tool_use_id": "c2", "content": "boom", "is_error": True},
    ]


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    later = parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert later is not None and 25 < later <= 30
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, ProviderAuthError),
        (403, ProviderAuthError),
        (429, ProviderRateLimitError),
        (408, ProviderUnavailableError),
        (409, ProviderUnavailableError),
        (500, ProviderUnavailableError),
        (503, ProviderUnavailableError),
        (529, ProviderUnavailableError),
        (400, ProviderRequestError),
        (404, ProviderRequestError),
        (422, ProviderRequestError),
    ],
)
def test_status_mapping(status: int, kind: type) -> None:
    error = error_for_status(status, "detail", provider="p", retry_after=3.0, auth_hint="KEY")
    assert type(error) is kind
    assert error.status == status
    assert ("KEY" in str(error)) == (kind is ProviderAuthError)
    if kind is ProviderRateLimitError:
        assert error.retry_after == 3.0
