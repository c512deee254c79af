"""The OpenAI Responses API adapter, on the real SDK, against the stub's ``/v1/responses``.

The stub streams the real event sequence and answers what the real API refuses
with its HTTP 400 (see ``tests.stubs.responses_stub``). A turn streams text,
calls a tool and gets its result back as a ``function_call_output``; the
reasoning summary stays out of the answer; cached input tokens are counted
apart; a response cut at ``max_output_tokens`` is a truncated answer; an invalid
request is asked once and shows the server's words; config picks the API.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.llm.client import ModelClient
from backend.llm.errors import ProviderRateLimitError, ProviderRequestError
from backend.llm.openai_chat import OpenAIProvider
from backend.llm.openai_responses import (
    OpenAIApiRouter,
    OpenAIResponsesProvider,
    ReasoningSummary,
)
from backend.llm.provider import Provider
from backend.llm.resilience import RetryPolicy
from backend.llm.selection import build_provider
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStarted,
    ToolResultBlock,
    ToolSpec,
)
from backend.messages import MessageType
from tests.integration.conftest import TEST_KEY
from tests.stubs import LLMStub, Status, StubToolCall, text_reply, tool_reply
from tests.stubs.llm_script import Reply, StreamFault, StubUsage
from tests.stubs.responses_stub import ResponsesReply, responses_rejection
from tests.support.engine_env import engine_env

RESPONSES = "/v1/responses"
CHAT = "/v1/chat/completions"
CODEX = "gpt-5.2-codex"
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file in the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)


def adapter(stub: LLMStub, summary: ReasoningSummary = "auto") -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(
        TEST_KEY, stub.openai_base_url, timeout_s=10.0, reasoning_summary=summary
    )


def ask(
    *messages: ChatMessage, model: str = CODEX, tools: bool = True, **options: Any
) -> ChatRequest:
    return ChatRequest(
        system="You are terse.",
        messages=list(messages) or [ChatMessage.user("read a.txt")],
        tools=[READ_FILE] if tools else [],
        options=ChatOptions(model=model, **options),
    )


async def run(
    provider: Provider, request: ChatRequest, events: list[StreamEvent] | None = None
) -> ChatResult:
    client = ModelClient(
        provider,
        policy=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02, rng=random.Random(1)),
    )
    try:
        return await client.run(request, (events if events is not None else []).append)
    finally:
        await provider.aclose()


async def test_text_streams_and_the_request_is_a_stateless_responses_request(
    llm_stub: LLMStub,
) -> None:
    llm_stub.push(text_reply("Hel", "lo ", "there."))
    events: list[StreamEvent] = []
    result = await run(adapter(llm_stub), ask(tools=True), events)
    assert result.text == "Hello there." and result.stop_reason == "end_turn"
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "there."]
    (request,) = llm_stub.requests
    assert request.path == RESPONSES
    body = request.body
    assert body["store"] is False and body["stream"] is True
    assert body["instructions"] == "You are terse."
    assert body["input"] == [{"type": "message", "role": "user", "content": "read a.txt"}]
    assert body["max_output_tokens"] == 4096 and "messages" not in body
    # Flat function tools, not Chat Completions' {"function": {...}}.
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file in the workspace.",
            "parameters": READ_FILE.input_schema,
            "strict": False,
        }
    ]
    assert body["tool_choice"] == "auto"


async def test_a_tool_call_streams_and_its_result_goes_back_as_function_call_output(
    llm_stub: LLMStub,
) -> None:
    llm_stub.push(tool_reply(StubToolCall("read_file", {"path": "a.txt"}, id="call_7")))
    events: list[StreamEvent] = []
    first = await run(adapter(llm_stub), ask(), events)
    assert first.stop_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("call_7", "read_file", {"path": "a.txt"})
    ]
    assert [e.kind for e in events if isinstance(e, ToolCallStarted | ToolCallArgsDelta)] == [
        "tool_call_started", "tool_call_delta", "tool_call_delta", "tool_call_delta",
    ]  # fmt: skip
    llm_stub.push(text_reply("a.txt says hi."))
    follow_up = ask(
        ChatMessage.user("read a.txt"),
        ChatMessage.assistant("Reading.", first.tool_calls),
        ChatMessage(role="user", content=[ToolResultBlock(tool_call_id="call_7", content="hi")]),
    )
    second = await run(adapter(llm_stub), follow_up)
    assert second.text == "a.txt says hi." and llm_stub.count(RESPONSES) == 2
    assert llm_stub.requests[-1].body["input"] == [
        {"type": "message", "role": "user", "content": "read a.txt"},
        {"type": "message", "role": "assistant", "content": "Reading."},
        {
            "type": "function_call",
            "call_id": "call_7",
            "name": "read_file",
            "arguments": '{"path": "a.txt"}',
        },
        {"type": "function_call_output", "call_id": "call_7", "output": "hi"},
    ]


async def test_the_reasoning_summary_is_streamed_apart_from_the_answer(llm_stub: LLMStub) -> None:
    thinking = ResponsesReply(text=["The answer ", "is 42."], reasoning=["Add ", "them up."])
    llm_stub.push(thinking)
    events: list[StreamEvent] = []
    result = await run(adapter(llm_stub), ask(tools=False), events)
    assert result.text == "The answer is 42."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Add them up."
    assert llm_stub.requests[0].body["reasoning"] == {"summary": "auto"}
    # Off by config (or for a model that does not reason): not asked for, not streamed.
    llm_stub.push(thinking, thinking)
    quiet: list[StreamEvent] = []
    await run(adapter(llm_stub, "off"), ask(tools=False), quiet)
    await run(adapter(llm_stub), ask(model="gpt-4.1", tools=False, temperature=0.2), quiet)
    assert not [e for e in quiet if isinstance(e, ReasoningDelta)]
    off, plain = (r.body for r in llm_stub.requests[1:])
    assert "reasoning" not in off and "reasoning" not in plain
    # A reasoning model refuses temperature; another model gets it.
    assert plain["temperature"] == 0.2
    llm_stub.push(text_reply("ok"))
    await run(adapter(llm_stub), ask(tools=False, temperature=0.2))
    assert "temperature" not in llm_stub.requests[-1].body


async def test_usage_counts_cached_input_tokens_apart(llm_stub: LLMStub) -> None:
    usage = StubUsage(input_tokens=100, cache_read_tokens=900, output_tokens=30)
    llm_stub.push(Reply(text=["ok"], usage=usage))
    result = await run(adapter(llm_stub), ask())
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (100, 900)
    assert result.usage.output_tokens == 30 and not result.usage.estimated


async def test_a_response_cut_at_max_output_tokens_is_truncated(llm_stub: LLMStub) -> None:
    llm_stub.push(Reply(text=["Half an ", "answ"], stop_reason="max_output_tokens"))
    result = await run(adapter(llm_stub), ask(max_tokens=5))
    assert result.text == "Half an answ" and result.stop_reason == "max_tokens"
    # The API's floor is 16 output tokens: a smaller limit is raised, not refused.
    assert llm_stub.requests[0].body["max_output_tokens"] == 16


async def test_a_tool_call_cut_at_max_output_tokens_never_runs(llm_stub: LLMStub) -> None:
    cut = StubToolCall("read_file", raw_arguments='{"path": "a.t', id="call_1")
    llm_stub.push(Reply(tool_calls=[cut], stop_reason="max_output_tokens"))
    result = await run(adapter(llm_stub), ask())
    assert result.interrupted and result.tool_calls == [] and llm_stub.count() == 1


async def test_arguments_the_model_finished_badly_are_recorded_not_raised(
    llm_stub: LLMStub,
) -> None:
    bad = StubToolCall("read_file", raw_arguments='{"path": a.txt}', id="call_1")
    llm_stub.push(tool_reply(bad))
    result = await run(adapter(llm_stub), ask())
    (call,) = result.tool_calls
    assert call.arguments == {} and call.arguments_error is not None
    assert '{"path": a.txt}' in call.arguments_error and not result.interrupted


async def test_an_invalid_request_is_asked_once_and_shows_the_servers_words(
    llm_stub: LLMStub,
) -> None:
    said = "Invalid 'input[1].call_id': no function_call carries it."
    llm_stub.push(Status(400, message=said), text_reply("never asked for"))
    with pytest.raises(ProviderRequestError) as caught:
        await run(adapter(llm_stub), ask())
    assert llm_stub.count(RESPONSES) == 1
    assert said in str(caught.value) and "HTTP 400" in str(caught.value)


def test_the_stub_refuses_what_the_real_api_refuses() -> None:
    orphan = {"input": [{"type": "function_call_output", "call_id": "call_9", "output": "x"}]}
    assert "call_9" in str(responses_rejection(orphan))
    assert responses_rejection({"model": CODEX, "temperature": 0.5}) is not None
    assert responses_rejection({"max_output_tokens": 8}) is not None
    nested = {"tools": [{"type": "function", "function": {"name": "read_file"}}]}
    assert responses_rejection(nested) is not None
    assert responses_rejection({"model": "gpt-4.1", "temperature": 0.5}) is None


TOO_LONG = StreamFault("error", after_events=2, error_type="context_length_exceeded")


@pytest.mark.parametrize(
    ("failure", "asked", "raised"),
    [
        (ResponsesReply(failure_code="invalid_prompt"), 1, ProviderRequestError),
        (Reply(text=["never"], fault=TOO_LONG), 1, ProviderRequestError),
        (ResponsesReply(failure_code="rate_limit_exceeded"), 3, ProviderRateLimitError),
    ],
)
async def test_failed_responses_and_error_events_are_typed(
    llm_stub: LLMStub, failure: Reply, asked: int, raised: type[Exception]
) -> None:
    llm_stub.push(failure, failure, failure)
    with pytest.raises(raised):
        await run(adapter(llm_stub), ask())
    assert llm_stub.count(RESPONSES) == asked


async def test_a_server_error_event_before_any_output_is_retried(llm_stub: LLMStub) -> None:
    broken = Reply(text=["never"], fault=StreamFault("error", after_events=2, message="boom"))
    llm_stub.push(broken, text_reply("second try"))
    result = await run(adapter(llm_stub), ask())
    assert result.text == "second try" and result.attempts == 2


# -- config picks the API -------------------------------------------------------------------
def _config(tmp_path: Path, body: str, env: dict[str, str] | None = None) -> Any:
    path = tmp_path / "config.toml"
    path.write_text(body)
    return load_config(
        path, env=engine_env(env if env is not None else {"OPENAI_API_KEY": TEST_KEY})
    )


@pytest.mark.parametrize(("api", "path"), [("responses", RESPONSES), ("chat", CHAT)])
async def test_api_in_the_config_picks_the_adapter(
    llm_stub: LLMStub, tmp_path: Path, api: str, path: str
) -> None:
    config = _config(
        tmp_path, f'[providers.openai]\nbase_url = "{llm_stub.openai_base_url}"\napi = "{api}"\n'
    )
    provider = build_provider(config, "openai")
    wanted = OpenAIResponsesProvider if api == "responses" else OpenAIProvider
    assert isinstance(provider, wanted)
    llm_stub.push(text_reply("ok"))
    assert (await run(provider, ask())).text == "ok"
    assert [r.path for r in llm_stub.requests] == [path]


async def test_auto_sends_codex_to_the_responses_api_on_openai_only(
    llm_stub: LLMStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No base_url: OpenAI's own API. The SDK itself is pointed at the stub.
    monkeypatch.setenv("OPENAI_BASE_URL", llm_stub.openai_base_url)
    provider = build_provider(_config(tmp_path, '[providers.openai]\napi = "auto"\n'), "openai")
    assert isinstance(provider, OpenAIApiRouter)
    llm_stub.push(text_reply("from responses"), text_reply("from chat"))
    assert (await run(provider, ask(model=CODEX))).text == "from responses"
    assert (await run(provider, ask(model="gpt-5.2"))).text == "from chat"
    assert [r.path for r in llm_stub.requests] == [RESPONSES, CHAT]
    # A local server (base_url set) gets Chat Completions whatever the model is called.
    local = _config(tmp_path, f'[providers.openai]\nbase_url = "{llm_stub.openai_base_url}"\n')
    assert isinstance(build_provider(local, "openai"), OpenAIProvider)


# -- a whole turn through the engine ----------------------------------------------------------
@pytest.fixture
async def responses_engine(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, tmp_path: Path
) -> AsyncIterator[Engine]:
    (workspace / "README.md").write_text("Sylk test workspace: the answer is 42.\n")
    base = f'[providers.openai]\nbase_url = "{llm_stub.openai_base_url}"\napi = "responses"\n'
    settings = _config(tmp_path, base + "\n[retry]\nbase_delay_s = 0.01\n")
    engine = Engine.from_parts(
        build(EngineConfig(data_dir=data_dir, workspace=workspace, provider="openai"), settings)
    )
    try:
        yield engine
    finally:
        await engine.aclose()


async def test_a_tool_using_turn_through_the_engine(
    responses_engine: Engine, llm_stub: LLMStub
) -> None:
    read = {"op": "librarian.file.read", "args": {"path": "README.md"}}
    llm_stub.push(
        tool_reply(StubToolCall("execute", read, id="call_readme"), text=("Let me read it.",)),
        ResponsesReply(text=["It says ", "42."], reasoning=["The file ", "says 42."]),
    )
    session = await responses_engine.ensure_session()
    reply = (await responses_engine.submit(session.id, "@architect What does the README say?"))[-1]
    assert reply.type is MessageType.AGENT_REPLY, reply.payload
    assert reply.payload["stop"] == "final"
    assert reply.payload["text"] == "Let me read it.\n\nIt says 42."  # no reasoning in it
    first, second = (r.body for r in llm_stub.requests)
    assert [r.path for r in llm_stub.requests] == [RESPONSES, RESPONSES]
    assert first["model"] == CODEX and first["store"] is False
    calls = [i for i in second["input"] if i.get("type") == "function_call"]
    outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == ["call_readme"]
    assert json.loads(calls[0]["arguments"]) == read
    assert [o["call_id"] for o in outputs] == ["call_readme"]
    assert "the answer is 42" in outputs[0]["output"]
    # The Codex model was sent no temperature and its prefix stayed the same.
    assert "temperature" not in second and second["instructions"] == first["instructions"]


async def test_a_truncated_answer_through_the_engine_says_so(
    responses_engine: Engine, llm_stub: LLMStub
) -> None:
    llm_stub.push(Reply(text=["The README ", "says"], stop_reason="max_output_tokens"))
    session = await responses_engine.ensure_session()
    reply = (await responses_engine.submit(session.id, "@architect What does the README say?"))[-1]
    assert reply.payload["stop"] == "truncated"
    assert reply.payload["text"].startswith("The README says")
    assert reply.payload["text"].endswith("(truncated)")
