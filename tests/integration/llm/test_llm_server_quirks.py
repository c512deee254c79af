"""The OpenAI adapter against a stub as strict as llama-cpp-python (issue 14, defects 1-3).

The stub's ``llama_cpp`` mode answers an assistant message with ``content: null`` the way
llama-cpp-python 0.3.x does: HTTP 500 carrying a pydantic validation error. A tool-using
turn must get through it; a request the server calls invalid is asked once, and the
server's words reach the error; ``tool_choice`` goes with the tools, as configured.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.config.settings import load_config
from backend.llm.client import ModelClient
from backend.llm.errors import ProviderRequestError
from backend.llm.openai_chat import OpenAIProvider, ToolChoice
from backend.llm.resilience import RetryPolicy
from backend.llm.selection import build_provider
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    StreamEvent,
    ToolResultBlock,
    ToolSpec,
)
from tests.integration.conftest import TEST_KEY
from tests.stubs import LLMStub, Status, StubToolCall, text_reply, tool_reply
from tests.stubs.llm_script import llama_cpp_rejection

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file in the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)
PATH = "/v1/chat/completions"
FORCED_READ_FILE = {"type": "function", "function": {"name": "read_file"}}
PYDANTIC_500 = (
    "1 validation error for ChatCompletionRequestAssistantMessage messages.1.content "
    "Input should be a valid string [type=string_type, input_value=None]"
)


@pytest.fixture
def llama() -> Iterator[LLMStub]:
    with LLMStub(llama_cpp=True) as stub:
        yield stub


def adapter(stub: LLMStub, tool_choice: ToolChoice = "auto") -> OpenAIProvider:
    return OpenAIProvider(
        TEST_KEY, stub.openai_base_url, name="local", timeout_s=10.0, tool_choice=tool_choice
    )


def ask(*messages: ChatMessage, tools: bool = True) -> ChatRequest:
    return ChatRequest(
        system="You are terse.",
        messages=list(messages) or [ChatMessage.user("read a.txt")],
        tools=[READ_FILE] if tools else [],
        options=ChatOptions(model="tiny.gguf"),
    )


async def run(provider: OpenAIProvider, request: ChatRequest) -> ChatResult:
    events: list[StreamEvent] = []
    client = ModelClient(
        provider,
        policy=RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02, rng=random.Random(1)),
    )
    try:
        return await client.run(request, events.append)
    finally:
        await provider.aclose()


def test_the_llama_cpp_stub_refuses_null_content_like_the_real_server() -> None:
    refused = llama_cpp_rejection({"messages": [{"role": "assistant", "content": None}]})
    assert refused is not None and "validation error" in refused["error"]["message"]
    assert llama_cpp_rejection({"messages": [{"role": "assistant", "content": ""}]}) is None


async def test_a_tool_using_turn_completes_against_llama_cpp(llama: LLMStub) -> None:
    llama.push(tool_reply(StubToolCall("read_file", {"path": "a.txt"}, id="call_1")))
    first = await run(adapter(llama), ask())
    assert [c.name for c in first.tool_calls] == ["read_file"]
    # The follow-up carries the tool call with no text: the message llama.cpp refused.
    llama.push(text_reply("a.txt says hello."))
    follow_up = ask(
        ChatMessage.user("read a.txt"),
        ChatMessage.assistant("", first.tool_calls),
        ChatMessage(role="user", content=[ToolResultBlock(tool_call_id="call_1", content="hi")]),
    )
    second = await run(adapter(llama), follow_up)
    assert second.text == "a.txt says hello." and second.attempts == 1
    assert llama.count(PATH) == 2
    sent = llama.requests[-1].body["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"] == ""
    assert sent[2]["tool_calls"][0]["id"] == "call_1"
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "hi"}


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (500, PYDANTIC_500),
        (400, "'tiny.gguf' does not support tools"),
        (422, "field required: messages.0.role"),
    ],
)
async def test_a_request_the_server_calls_invalid_is_asked_once_and_its_words_shown(
    llama: LLMStub, status: int, said: str
) -> None:
    llama.push(Status(status, message=said), text_reply("never asked for"))
    with pytest.raises(ProviderRequestError) as caught:
        await run(adapter(llama), ask())
    assert llama.count(PATH) == 1
    message = str(caught.value)
    assert said in message and f"HTTP {status}" in message
    assert "unavailable or overloaded" not in message


async def test_a_plain_500_is_still_retried(llama: LLMStub) -> None:
    llama.push(Status(500, message="out of memory"), text_reply("ok"))
    result = await run(adapter(llama), ask())
    assert result.text == "ok" and llama.count(PATH) == 2


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
async def test_tool_choice_is_sent_with_the_tools(llama: LLMStub, choice: ToolChoice) -> None:
    llama.push(text_reply("ok"), text_reply("ok"))
    await run(adapter(llama, choice), ask())
    await run(adapter(llama, choice), ask(tools=False))
    with_tools, without = (r.body for r in llama.requests)
    # llama-cpp-python fails an assert on "required": its one tool is asked for by name.
    sent = FORCED_READ_FILE if choice == "required" else choice
    assert with_tools["tool_choice"] == sent and with_tools["tools"]
    assert "tool_choice" not in without and "tools" not in without


async def test_tool_choice_is_set_per_provider_in_the_config(
    llama: LLMStub, tmp_path: Path
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{llama.openai_base_url}"\n'
        'tool_choice = "required"\n\n'
        f'[providers.other]\nkind = "openai"\nbase_url = "{llama.openai_base_url}"\n'
    )
    config = load_config(config_file, env={})
    llama.push(text_reply("ok"), text_reply("ok"))
    for name in ("local", "other"):
        provider = build_provider(config, name)
        assert isinstance(provider, OpenAIProvider)
        await run(provider, ask())
    assert [r.body["tool_choice"] for r in llama.requests] == [FORCED_READ_FILE, "auto"]
