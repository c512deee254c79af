"""Both adapters on their real SDKs against the HTTP stub: streaming, tools, usage,
and what the SDK actually sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from backend.llm.client import ModelClient
from backend.llm.provider import Provider
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    StreamEvent,
    StreamStopped,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResultBlock,
    ToolSpec,
    Usage,
    UsageReported,
)
from tests.integration.conftest import TEST_KEY
from tests.stubs import LLMStub, Reply, StubToolCall, StubUsage, text_reply, tool_reply

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file in the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)


def ask(text: str = "hi", **options: Any) -> ChatRequest:
    return ChatRequest(
        system="You are terse.",
        messages=[ChatMessage.user(text)],
        tools=[READ_FILE],
        options=ChatOptions(model="stub-model", **options),
    )


async def run(provider: Provider, request: ChatRequest) -> tuple[Any, list[StreamEvent]]:
    events: list[StreamEvent] = []
    result = await ModelClient(provider).run(request, events.append)
    return result, events


async def test_a_plain_streamed_text_turn(
    llm_stub: LLMStub, provider: Provider, llm_path: str
) -> None:
    llm_stub.push(text_reply("Hel", "lo, ", "world."))
    result, events = await run(provider, ask())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "world."]
    assert isinstance(events[-1], StreamStopped)
    assert result.text == "Hello, world."
    assert (result.stop_reason, result.attempts, result.tool_calls) == ("end_turn", 1, [])
    assert result.usage == Usage(input_tokens=12, output_tokens=7)
    assert llm_stub.count(llm_path) == 1


async def test_a_tool_call_with_arguments_split_across_deltas(
    llm_stub: LLMStub, provider: Provider
) -> None:
    args = {"path": "src/app.py", "lines": [1, 20]}
    llm_stub.push(
        tool_reply(StubToolCall("read_file", args, id="call_1", pieces=5), text=("Looking.",))
    )
    result, events = await run(provider, ask("what is in app.py?"))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    fragments = [e.fragment for e in events if isinstance(e, ToolCallArgsDelta)]
    completed = [e for e in events if isinstance(e, ToolCallCompleted)]
    assert [(s.index, s.id, s.name) for s in started] == [(0, "call_1", "read_file")]
    assert len(fragments) == 5
    assert json.loads("".join(fragments)) == args
    assert [c.call for c in completed] == [ToolCall(id="call_1", name="read_file", arguments=args)]
    assert result.tool_calls == [ToolCall(id="call_1", name="read_file", arguments=args)]
    assert result.text == "Looking."
    assert result.stop_reason == "tool_use"


async def test_two_tool_calls_keep_their_order(llm_stub: LLMStub, provider: Provider) -> None:
    llm_stub.push(
        tool_reply(
            StubToolCall("read_file", {"path": "a"}), StubToolCall("read_file", {"path": "b"})
        )
    )
    result, _ = await run(provider, ask())
    assert [c.arguments["path"] for c in result.tool_calls] == ["a", "b"]
    assert len({c.id for c in result.tool_calls}) == 2


async def test_usage_is_reported_with_cache_tokens(
    llm_stub: LLMStub, provider: Provider, vendor: str
) -> None:
    usage = StubUsage(
        input_tokens=100, output_tokens=42, cache_read_tokens=30, cache_write_tokens=8
    )
    llm_stub.push(text_reply("ok", usage=usage))
    result, events = await run(provider, ask())
    reported = [e.usage for e in events if isinstance(e, UsageReported)]
    # OpenAI reports no cache writes; its cached tokens are split out of prompt_tokens.
    expected = Usage(
        input_tokens=100,
        output_tokens=42,
        cache_read_tokens=30,
        cache_write_tokens=8 if vendor == "anthropic" else 0,
    )
    assert reported == [expected]
    assert result.usage == expected


def follow_up() -> ChatRequest:
    call = ToolCall(id="call_7", name="read_file", arguments={"path": "a.txt"})
    return ChatRequest(
        system="You are terse.",
        messages=[
            ChatMessage.user("read a.txt"),
            ChatMessage.assistant("Let me look.", [call]),
            ChatMessage(
                role="user",
                content=[
                    ToolResultBlock(tool_call_id="call_7", content="hello from a.txt"),
                    TextBlock(text="and summarise it"),
                ],
            ),
        ],
        tools=[READ_FILE],
        options=ChatOptions(model="stub-model", max_tokens=321, temperature=0.25),
    )


async def test_anthropic_request_translation(llm_stub: LLMStub) -> None:
    from tests.integration.conftest import make_provider

    provider = make_provider("anthropic", llm_stub.base_url)
    llm_stub.push(text_reply("ok"))
    await ModelClient(provider).run(follow_up())
    await provider.aclose()
    (sent,) = llm_stub.requests
    assert sent.path == "/v1/messages"
    # This SDK sends the key as a bearer token; older ones used x-api-key.
    assert TEST_KEY in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
    assert sent.headers.get("x-stainless-retry-count") == "0"
    body = sent.body
    # Prompt caching (on by default): breakpoints on the last tool, the system block, the
    # end of the conversation before the latest user text, and the last message.
    cached = {"cache_control": {"type": "ephemeral"}}
    assert body["system"] == [{"type": "text", "text": "You are terse.", **cached}]
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("stub-model", 321, 0.25)
    assert body["stream"] is True
    assert body["tools"] == [
        {
            "name": "read_file",
            "description": READ_FILE.description,
            "input_schema": READ_FILE.input_schema,
            **cached,
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "call_7",
                    "name": "read_file",
                    "input": {"path": "a.txt"},
                    **cached,
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_7", "content": "hello from a.txt"},
                {"type": "text", "text": "and summarise it", **cached},
            ],
        },
    ]


async def test_openai_request_translation(llm_stub: LLMStub) -> None:
    from tests.integration.conftest import make_provider

    provider = make_provider("openai", llm_stub.base_url)
    llm_stub.push(text_reply("ok"))
    await ModelClient(provider).run(follow_up())
    await provider.aclose()
    (sent,) = llm_stub.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert sent.headers.get("x-stainless-retry-count") == "0"
    body = sent.body
    assert (body["model"], body["temperature"]) == ("stub-model", 0.25)
    assert body["max_tokens"] == 321  # a compatible server: max_tokens, not max_completion_tokens
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": READ_FILE.description,
                "parameters": READ_FILE.input_schema,
            },
        }
    ]
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1] == {"role": "user", "content": "read a.txt"}
    assert messages[2]["role"] == "assistant"
    assert messages[2]["content"] == "Let me look."
    (tool_call,) = messages[2]["tool_calls"]
    assert (tool_call["id"], tool_call["function"]["name"]) == ("call_7", "read_file")
    assert json.loads(tool_call["function"]["arguments"]) == {"path": "a.txt"}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_7", "content": "hello from a.txt"}
    assert messages[4] == {"role": "user", "content": "and summarise it"}


@pytest.mark.parametrize("vendor", ["openai"])
async def test_openai_compatible_servers_that_leave_things_out(
    llm_stub: LLMStub, provider: Provider
) -> None:
    # Like some Ollama / llama.cpp builds: no usage chunk, no tool-call ids, no finish_reason.
    llm_stub.push(
        Reply(
            text=["Sure."],
            tool_calls=[StubToolCall("read_file", {"path": "x"})],
            include_usage=False,
            omit_ids=True,
            omit_finish_reason=True,
        )
    )
    result, events = await run(provider, ask())
    assert not any(isinstance(e, UsageReported) for e in events)
    usage = result.usage  # counted locally instead (backend.llm.token_estimate)
    assert usage.estimated and usage.input_tokens > 0 and usage.output_tokens > 0
    (call,) = result.tool_calls
    assert call.name == "read_file" and call.arguments == {"path": "x"}
    assert call.id.startswith("call_")
    assert result.stop_reason == "tool_use"


async def test_the_stub_also_answers_non_streaming_sdk_calls(
    llm_stub: LLMStub, vendor: str
) -> None:
    llm_stub.push(text_reply("Hello ", "there."))
    if vendor == "anthropic":
        import anthropic

        a_client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=llm_stub.base_url)
        message = await a_client.messages.create(
            model="stub-model", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        await a_client.close()
        assert message.content[0].type == "text"
        assert message.content[0].text == "Hello there."
    else:
        import openai

        o_client = openai.AsyncOpenAI(api_key=TEST_KEY, base_url=llm_stub.openai_base_url)
        completion = await o_client.chat.completions.create(
            model="stub-model", messages=[{"role": "user", "content": "hi"}]
        )
        await o_client.close()
        assert completion.choices[0].message.content == "Hello there."
