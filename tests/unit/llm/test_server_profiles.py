"""Server profiles: how a request is shaped for each, and how a server is recognised."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from backend.llm.errors import ProviderRequestError, ProviderStreamError
from backend.llm.openai_chat.adapter import _tool_choice
from backend.llm.openai_chat.detect import ProfileChooser, profile_from_models
from backend.llm.openai_chat.messages import to_openai_messages
from backend.llm.openai_chat.profiles import (
    PROFILE_NAMES,
    PROFILES,
    ProfileName,
    is_openai_host,
    request_options,
)
from backend.llm.openai_chat.stream import EmptyReplyError, Translation, empty_reply
from backend.llm.openai_chat.whole import completion_events
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ReasoningDelta,
    StreamStopped,
    TextDelta,
    ToolCall,
    ToolCallArgsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSpec,
    Usage,
    UsageReported,
)

TOOL = ToolSpec(name="read_file", description="Read.", input_schema={"type": "object"})


def models(*owners: object) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": f"m{n}", "owned_by": o} for n, o in enumerate(owners)],
    }


@pytest.mark.parametrize(
    ("owner", "expected"),
    [
        ("llamacpp", "llama-cpp"),
        ("me", "llama-cpp-python"),
        ("library", "ollama"),
        ("vllm", "vllm"),
        ("organization_owner", "lm-studio"),
        ("openai", "openai"),
        ("system", "openai"),
        ("  VLLM ", "vllm"),
        ("someone-else", "generic"),
        ("", "generic"),
    ],
)
def test_owned_by_names_the_server(owner: str, expected: ProfileName) -> None:
    assert profile_from_models(models(owner), {}) == expected


def test_the_server_header_wins_over_the_model_list() -> None:
    assert profile_from_models(models("vllm"), {"server": "llama.cpp"}) == "llama-cpp"
    assert profile_from_models(None, {"server": "llama.cpp"}) == "llama-cpp"
    assert profile_from_models(models("vllm"), {"server": "uvicorn"}) == "vllm"


def test_the_most_common_known_owner_decides() -> None:
    assert profile_from_models(models("library", "library", "bartowski"), {}) == "ollama"
    assert profile_from_models(models("me", "vllm", "vllm"), {}) == "vllm"


@pytest.mark.parametrize(
    "payload",
    [
        None,
        "vllm",
        [{"owned_by": "vllm"}],
        {"data": "vllm"},
        {"data": [None, 3, ["vllm"], {"owned_by": None}, {"owned_by": {"x": "vllm"}}]},
        {"object": "list"},
    ],
)
def test_a_hostile_or_odd_model_list_is_generic(payload: object) -> None:
    assert profile_from_models(payload, {}) == "generic"


def test_openai_itself_needs_no_probe() -> None:
    assert is_openai_host(None) and is_openai_host("https://api.openai.com/v1")
    assert not is_openai_host("http://127.0.0.1:8080/v1")
    assert ProfileChooser("auto", None, name="openai").known == PROFILES["openai"]
    assert ProfileChooser("auto", "http://localhost:11434/v1", name="local").known is None
    chosen = ProfileChooser("vllm", "https://api.openai.com/v1", name="x").known
    assert chosen == PROFILES["vllm"]  # the config wins, even there


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_exactly_one_token_limit_field_is_sent(name: ProfileName) -> None:
    shaped = request_options(PROFILES[name], limit=300)
    field = PROFILES[name].token_limit_field
    other = "max_tokens" if field == "max_completion_tokens" else "max_completion_tokens"
    assert shaped[field] == 300 and shaped[other] is openai.omit
    assert shaped["stream_options"] == {"include_usage": True}


def test_the_token_fields_where_the_servers_read_them() -> None:
    fields = {name: PROFILES[name].token_limit_field for name in PROFILE_NAMES}
    assert fields == {
        "openai": "max_completion_tokens",  # reasoning models refuse max_tokens
        "llama-cpp": "max_tokens",
        "llama-cpp-python": "max_tokens",  # it drops max_completion_tokens
        "ollama": "max_tokens",  # so does Ollama
        "vllm": "max_completion_tokens",
        "lm-studio": "max_tokens",
        "generic": "max_tokens",
    }


def test_parallel_tool_calls_is_never_sent() -> None:
    """Every server's default allows parallel calls; OpenAI's o-series refuse the field."""
    for name in PROFILE_NAMES:
        assert "parallel_tool_calls" not in request_options(PROFILES[name], limit=None)
    assert not PROFILES["openai"].parallel_tool_calls


def request(*, tools: bool = True, forced: str | None = None) -> ChatRequest:
    return ChatRequest(
        messages=[
            ChatMessage.user("read a.txt"),
            ChatMessage.assistant("", [ToolCall(id="c1", name="read_file", arguments={})]),
        ],
        tools=[TOOL] if tools else [],
        tool_choice=forced,
        options=ChatOptions(model="m"),
    )


def test_tool_choice_per_profile() -> None:
    ollama, llama = PROFILES["ollama"], PROFILES["llama-cpp"]
    assert _tool_choice(request(), "auto", llama) == "auto"  # llama-cpp-python needs it
    assert _tool_choice(request(), "auto", ollama) is openai.omit  # Ollama reads none
    assert _tool_choice(request(), "required", ollama) == "required"  # asked for: sent
    assert _tool_choice(request(tools=False), "auto", llama) is openai.omit
    forced = _tool_choice(request(forced="read_file"), "auto", ollama)
    assert forced == {"type": "function", "function": {"name": "read_file"}}


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_a_tool_call_message_without_text_per_profile(name: ProfileName) -> None:
    profile = PROFILES[name]
    sent = to_openai_messages(request(), null_content=profile.null_content)
    assistant = dict(sent[1])
    assert assistant["content"] == (None if profile.null_content else "")


def test_a_tool_call_message_with_text_keeps_it_under_every_profile() -> None:
    said = ChatRequest(
        messages=[ChatMessage.assistant("Let me look.", [ToolCall(id="c", name="t")])],
        options=ChatOptions(model="m"),
    )
    for null_content in (True, False):
        entry = dict(to_openai_messages(said, null_content=null_content)[0])
        assert entry["content"] == "Let me look."


def chunk(delta: dict[str, Any], finish: str | None = None) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_become_reasoning_events(field: str) -> None:
    events = list(Translation().feed(chunk({field: "thinking...", "content": None})))
    assert events == [ReasoningDelta(text="thinking...")]


def test_reasoning_and_answer_in_one_delta_stay_apart() -> None:
    events = list(
        Translation().feed(
            chunk({"reasoning_content": "hmm", "reasoning": "hmm", "content": "Answer"})
        )
    )
    assert events == [ReasoningDelta(text="hmm"), TextDelta(text="Answer")]  # not twice


@pytest.mark.parametrize("odd", [{"summary": "x"}, ["x"], 3, ""])
def test_a_reasoning_field_that_is_not_text_is_dropped(odd: object) -> None:
    assert list(Translation().feed(chunk({"reasoning": odd, "content": "ok"}))) == [
        TextDelta(text="ok")
    ]


def test_llama_cpp_python_is_asked_unstreamed_with_tools_and_llama_server_is_not() -> None:
    python, server = PROFILES["llama-cpp-python"], PROFILES["llama-cpp"]
    assert not python.stream_tools and not python.required_tool_choice
    assert server.stream_tools and server.required_tool_choice
    assert all(PROFILES[n].stream_tools for n in PROFILE_NAMES if n != "llama-cpp-python")


def test_stream_options_go_only_with_a_stream() -> None:
    for name in PROFILE_NAMES:
        assert request_options(PROFILES[name], limit=9, stream=False)["stream_options"] is (
            openai.omit
        )


def test_required_to_llama_cpp_python_is_the_one_tool_by_name_or_refused() -> None:
    python = PROFILES["llama-cpp-python"]
    forced = {"type": "function", "function": {"name": "read_file"}}
    assert _tool_choice(request(), "required", python) == forced
    assert _tool_choice(request(), "required", PROFILES["llama-cpp"]) == "required"
    assert _tool_choice(request(), "auto", python) == "auto"
    two = request().model_copy(update={"tools": [TOOL, TOOL.model_copy(update={"name": "x"})]})
    with pytest.raises(ProviderRequestError, match="cannot take"):
        _tool_choice(two, "required", python, provider="local")


def test_a_stream_without_a_reply_is_told_apart_from_an_empty_answer() -> None:
    nothing = Translation()
    list(nothing.feed(chunk({"role": "assistant", "content": ""})))
    assert not nothing.replied and nothing.chunks == 1
    finished = Translation()
    list(finished.feed(chunk({"role": "assistant", "content": ""})))
    list(finished.feed(chunk({}, finish="stop")))
    assert finished.replied  # the server said it was done: an (empty) answer
    thinking = Translation()
    list(thinking.feed(chunk({"reasoning": "hmm"})))
    assert not thinking.replied  # reasoning alone, no finish: cut before any answer
    said = Translation()
    list(said.feed(chunk({"content": "Hi"})))
    assert said.replied and said.stop_reason() == "end_turn"


def test_the_empty_reply_error_is_typed_and_not_retried() -> None:
    error = empty_reply("local", "generic", 0)
    assert isinstance(error, ProviderStreamError) and not error.retryable
    assert error.message == "local: the server ended the stream without a reply (no chunk)"
    assert 'profile = "llama-cpp-python"' in error.help_hint
    assert "llama-cpp-python" not in empty_reply("local", "vllm", 2).help_hint


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> Any:
    return ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            **extra,
        }
    )


def test_a_whole_reply_plays_back_as_a_streams_events() -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 13, "total_tokens": 53}
    call = {"id": "call_0", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}  # fmt: skip
    message = {"role": "assistant", "content": "Let me look.", "tool_calls": [call],
               "reasoning_content": "They want a.txt."}  # fmt: skip
    events = list(completion_events(completion(message, "tool_calls", usage=usage)))
    assert events == [
        ReasoningDelta(text="They want a.txt."),
        TextDelta(text="Let me look."),
        ToolCallStarted(index=0, id="call_0", name="read_file"),
        ToolCallArgsDelta(index=0, fragment='{"path": "a.txt"}'),
        ToolCallCompleted(
            index=0, call=ToolCall(id="call_0", name="read_file", arguments={"path": "a.txt"})
        ),
        UsageReported(usage=Usage(input_tokens=40, output_tokens=13)),
        StreamStopped(reason="tool_use"),
    ]


def test_llama_cpp_pythons_whole_tool_call_with_poor_arguments() -> None:
    """As the real server sent it: content null, a nameless legacy function_call
    beside the tool call, arguments the model finished badly, finish "stop"."""
    raw = '{ "path": "file1.txt,"'
    call = {"id": "call__0_read_file_cmpl-1", "type": "function",
            "function": {"name": "read_file", "arguments": raw}}  # fmt: skip
    message = {"role": "assistant", "content": None, "tool_calls": [call],
               "function_call": {"name": "", "arguments": raw}}  # fmt: skip
    events = list(completion_events(completion(message, "stop")))
    [done] = [e for e in events if isinstance(e, ToolCallCompleted)]
    assert done.call.name == "read_file" and done.call.arguments_error
    assert events[-1] == StreamStopped(reason="tool_use")
    assert not [e for e in events if isinstance(e, (TextDelta, UsageReported))]


def test_a_legacy_function_call_alone_is_a_tool_call() -> None:
    message = {"role": "assistant", "content": None,
               "function_call": {"name": "read_file", "arguments": "{}"}}  # fmt: skip
    [started] = [e for e in completion_events(completion(message, "function_call"))
                 if isinstance(e, ToolCallStarted)]  # fmt: skip
    assert started.name == "read_file" and started.id.startswith("call_")


def test_a_whole_reply_without_a_choice_or_a_name_is_an_error() -> None:
    empty = ChatCompletion.model_validate(
        {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    with pytest.raises(EmptyReplyError, match="no choice"):
        list(completion_events(empty))
    nameless = {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}]}  # fmt: skip
    with pytest.raises(ProviderStreamError, match="no function name"):
        list(completion_events(completion(nameless)))
