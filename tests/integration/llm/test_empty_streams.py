"""A server that cannot stream a tool call, and a stream that carries no reply (issue 14).

llama-cpp-python 0.3.36, asked to stream while offering tools, raises once the model
picks a tool, after its HTTP 200 and headers are out: a 0-byte body, no chunk, no
``[DONE]``. ``tool_choice: "required"`` fails an assert (an empty 200 streamed, a 500
with an empty message unstreamed). The stub plays both; the adapter asks that server
unstreamed when tools are offered, and an empty stream from any server is a typed
error, asked once, never an empty answer.
"""

from __future__ import annotations

import random
from typing import Any

import httpx2
import pytest

from backend.llm.client import ModelClient
from backend.llm.errors import ProviderRequestError, ProviderStreamError
from backend.llm.openai_chat import OpenAIProvider, ToolChoice
from backend.llm.openai_chat.profiles import ProfileSetting
from backend.llm.openai_chat.stream import EmptyReplyError
from backend.llm.resilience import RetryPolicy
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    StreamEvent,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSpec,
    UsageReported,
)
from tests.integration.conftest import TEST_KEY
from tests.stubs import LLMStub, StubToolCall, text_reply, tool_reply
from tests.stubs.llm_script import Reply, StreamFault, sse
from tests.stubs.server_profiles import ServerPlay

PATH = "/v1/chat/completions"
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
READ_FILE = ToolSpec(name="read_file", description="Read a file.", input_schema=SCHEMA)
SEARCH = ToolSpec(name="search", description="Search.", input_schema=SCHEMA)


def provider_for(
    stub: LLMStub, *, profile: ProfileSetting = "auto", tool_choice: ToolChoice = "auto"
) -> OpenAIProvider:
    return OpenAIProvider(
        TEST_KEY,
        stub.openai_base_url,
        name="local",
        timeout_s=10.0,
        profile=profile,
        tool_choice=tool_choice,
    )


def ask(*tools: ToolSpec) -> ChatRequest:
    return ChatRequest(
        system="You are terse.",
        messages=[ChatMessage.user("read a.txt")],
        tools=list(tools),
        options=ChatOptions(model="gemma-3-270m", max_tokens=64),
    )


async def run(provider: OpenAIProvider, request: ChatRequest) -> tuple[ChatResult, list[Any]]:
    events: list[StreamEvent] = []
    policy = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02, rng=random.Random(1))
    try:
        return await ModelClient(provider, policy=policy).run(request, events.append), events
    finally:
        await provider.aclose()


def raw_post(stub: LLMStub, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{stub.openai_base_url}/chat/completions", json=body, timeout=10)


def test_the_stub_refuses_to_stream_a_tool_call_as_llama_cpp_python_does() -> None:
    tool = {"type": "function", "function": {"name": "read_file", "parameters": SCHEMA}}
    base = {"model": "m", "messages": [{"role": "user", "content": "read"}], "tools": [tool]}
    with LLMStub(profile="llama-cpp-python") as stub:
        stub.push(tool_reply(StubToolCall("read_file", {"path": "a"})))
        streamed = raw_post(stub, {**base, "tool_choice": "auto", "stream": True})
        assert streamed.status_code == 200 and streamed.content == b""
        stub.push(tool_reply(StubToolCall("read_file", {"path": "a"})))
        required = raw_post(stub, {**base, "tool_choice": "required", "stream": True})
        assert required.status_code == 200 and required.content == b""
        unstreamed = raw_post(stub, {**base, "tool_choice": "required"})
        assert unstreamed.status_code == 500 and unstreamed.json()["error"]["message"] == ""
        stub.push(text_reply("Just text."))  # text under "auto" streams
        text = raw_post(stub, {**base, "tool_choice": "auto", "stream": True})
        assert b"Just text." in text.content and b"[DONE]" in text.content
        stub.push(tool_reply(StubToolCall("read_file", {"path": "a"})))
        whole = raw_post(stub, {**base, "tool_choice": "auto"}).json()
        assert whole["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_file"
        assert stub.server.empty_streams == 2


@pytest.mark.parametrize("choice", ["auto", "required"])
async def test_a_tool_call_from_llama_cpp_python_is_asked_for_unstreamed(
    choice: ToolChoice,
) -> None:
    with LLMStub(profile="llama-cpp-python") as stub:
        stub.push(tool_reply(StubToolCall("read_file", {"path": "a.txt"}, id="call_1")))
        result, events = await run(provider_for(stub, tool_choice=choice), ask(READ_FILE))
        [sent] = [r.body for r in stub.requests if r.path == PATH]
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_1", "read_file", {"path": "a.txt"})
    ]
    assert result.stop_reason == "tool_use" and result.attempts == 1
    assert "stream" not in sent or sent["stream"] is False
    assert "stream_options" not in sent and sent["max_tokens"] == 64
    # "required" fails the server's assert: its one tool is asked for by name instead.
    forced = {"type": "function", "function": {"name": "read_file"}}
    assert sent["tool_choice"] == (forced if choice == "required" else "auto")
    kinds = [type(e) for e in events]
    assert kinds.index(ToolCallStarted) < kinds.index(ToolCallArgsDelta)
    assert kinds.index(ToolCallArgsDelta) < kinds.index(ToolCallCompleted)
    assert [e.usage.output_tokens for e in events if isinstance(e, UsageReported)] == [7]
    assert stub.server.empty_streams == 0


async def test_required_with_several_tools_is_refused_before_asking_llama_cpp_python() -> None:
    with LLMStub(profile="llama-cpp-python") as stub:
        stub.push(text_reply("never asked"))
        provider = provider_for(stub, tool_choice="required")
        with pytest.raises(ProviderRequestError, match='cannot take tool_choice "required"') as e:
            await run(provider, ask(READ_FILE, SEARCH))
        assert stub.count(PATH) == 0
    assert 'tool_choice = "auto"' in str(e.value)


async def test_a_malformed_whole_tool_call_goes_back_to_the_loop_as_an_arguments_error() -> None:
    with LLMStub(profile="llama-cpp-python") as stub:
        bad = StubToolCall("read_file", {}, id="call_9", raw_arguments='{ "path": "file1.txt,"')
        stub.push(tool_reply(bad))
        result, _ = await run(provider_for(stub), ask(READ_FILE))
    [call] = result.tool_calls
    assert call.id == "call_9" and call.arguments == {} and call.arguments_error


async def test_an_empty_200_stream_is_a_typed_error_asked_once() -> None:
    """The profile set wrong by hand (llama.cpp's server streams tool calls): the same
    empty body the real llama-cpp-python sends is an error, not an empty answer."""
    with LLMStub(profile="llama-cpp-python") as stub:
        stub.push(tool_reply(StubToolCall("read_file", {"path": "a.txt"})), text_reply("no"))
        with pytest.raises(EmptyReplyError) as caught:
            await run(provider_for(stub, profile="llama-cpp"), ask(READ_FILE))
        assert stub.count(PATH) == 1 and stub.server.empty_streams == 1
    error = caught.value
    assert isinstance(error, ProviderStreamError) and not error.retryable
    assert error.provider == "local"
    assert "the server ended the stream without a reply (no chunk)" in error.message
    assert "its log says why" in error.help_hint
    assert 'profile = "llama-cpp-python"' in error.help_hint


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (Reply(text=["x"], fault=StreamFault("end", after_events=0)), "no chunk"),  # [DONE]
        (Reply(text=["x"], fault=StreamFault("end", after_events=1)), "1 chunk(s)"),  # role
    ],
)
async def test_a_stream_without_a_reply_from_any_server_is_an_error(
    llm_stub: LLMStub, reply: Reply, what: str
) -> None:
    llm_stub.push(reply, text_reply("never asked"))
    with pytest.raises(EmptyReplyError, match="without a reply") as caught:
        await run(provider_for(llm_stub), ask())
    assert what in caught.value.message and llm_stub.count(PATH) == 1


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        (Reply(text=["Hello"], omit_finish_reason=True), "Hello"),  # Ollama and others
        (Reply(text=[], stop_reason="stop"), ""),  # the server finished an empty answer
    ],
)
async def test_what_real_servers_do_legitimately_stays_an_answer(
    llm_stub: LLMStub, reply: Reply, text: str
) -> None:
    llm_stub.push(reply)
    result, _ = await run(provider_for(llm_stub), ask())
    assert result.text == text and result.stop_reason == "end_turn"


class HostileServer(ServerPlay):
    """A server whose every reply (whole, or each chunk of a stream) is ``body``."""

    body: Any = None

    def whole(self, reply: Reply, model: str, body: dict[str, Any]) -> Any:
        return self.body

    def events(self, reply: Reply, model: str, body: dict[str, Any]) -> list[Any]:
        return [("meta", sse(self.body)), ("meta", sse("[DONE]"))]


HOSTILE = [
    {"choices": [None]},
    {"choices": [{"index": 0, "message": None, "delta": None}]},
    {"choices": [{"index": 0, "message": {"content": 5}, "delta": {"content": 5}}]},
    {
        "choices": [
            {
                "index": 0,
                "message": {"tool_calls": [None, {"id": 3}]},
                "delta": {"tool_calls": [None]},
            }
        ]
    },
    {
        "choices": [
            {
                "index": 0,
                "message": {"content": "hi"},
                "delta": {"content": "hi"},
                "finish_reason": "stop",
            }
        ],
        "usage": "lots",
    },
    [1, 2],
]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("body", HOSTILE)
async def test_a_hostile_reply_is_a_typed_error_never_a_crash(body: Any, streamed: bool) -> None:
    with LLMStub(profile="llama-cpp-python") as stub:
        hostile = HostileServer("llama-cpp-python")
        hostile.body = body
        stub.server = hostile
        stub.push(*[text_reply("x")] * 3)  # each attempt's turn; the body is what is sent
        tools = () if streamed else (READ_FILE,)  # with tools: asked whole
        with pytest.raises(ProviderStreamError, match=r"^local: "):
            await run(provider_for(stub), ask(*tools))
