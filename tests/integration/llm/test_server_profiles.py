"""One tool-using turn against every OpenAI-compatible server the stub can play (issue 14).

Each stub profile answers ``GET /v1/models`` like its real server, refuses (or would
silently drop) what that server does, streams usage and reasoning its own way. The
same turn (a tool call, its result, the final answer) runs through the real
``openai`` SDK, our adapter, the retrying client and the agent loop with a real
file-reading tool; the profile is found by the adapter's own probe.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.agents.loop import AgentLoop
from backend.agents.tools import OutputSink, ToolOutcome
from backend.config.settings import load_config
from backend.events import AgentStep
from backend.llm.client import ModelClient
from backend.llm.errors import ProviderConnectionError, ProviderRequestError
from backend.llm.openai_chat import OpenAIProvider
from backend.llm.openai_chat.profiles import ProfileName, ProfileSetting
from backend.llm.resilience import RetryPolicy
from backend.llm.selection import build_provider
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    UsageReported,
)
from tests.integration.conftest import TEST_KEY
from tests.stubs import LLMStub, StubToolCall, text_reply, tool_reply
from tests.stubs.server_profiles import STUB_PROFILES, ServerPlay, StubProfile

PATH = "/v1/chat/completions"
THOUGHT = "SECRET-THOUGHT: the user wants a.txt, so I will call read_file first."
DETECTED: dict[StubProfile, ProfileName] = {
    "openai": "openai",
    "llama-cpp": "llama-cpp",
    "llama-cpp-python": "llama-cpp-python",
    "ollama": "ollama",
    "vllm": "vllm",
    "lm-studio": "lm-studio",
}
REASONING_PROFILES = ("llama-cpp", "ollama", "vllm", "lm-studio")


class WorkspaceReader:
    """A real tool: reads a file under ``root`` (the turn's only tool)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def specs(self) -> list[ToolSpec]:
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return [ToolSpec(name="read_file", description="Read a file.", input_schema=schema)]

    async def execute(self, call: ToolCall, on_output: OutputSink | None = None) -> ToolOutcome:
        target = (self.root / str(call.arguments.get("path", ""))).resolve()
        if not target.is_relative_to(self.root) or not target.is_file():
            return ToolOutcome(content=f"no such file: {call.arguments}", is_error=True)
        return ToolOutcome(content=target.read_text())


@pytest.fixture(params=STUB_PROFILES)
def server(request: pytest.FixtureRequest) -> Any:
    with LLMStub(profile=request.param) as stub:
        yield stub


@pytest.fixture
async def local(server: LLMStub) -> AsyncIterator[OpenAIProvider]:
    provider = OpenAIProvider(TEST_KEY, server.openai_base_url, name="local", timeout_s=10.0)
    try:
        yield provider
    finally:
        await provider.aclose()


def client(provider: OpenAIProvider) -> ModelClient:
    policy = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02, rng=random.Random(1))
    return ModelClient(provider, policy=policy)


async def tool_turn(provider: OpenAIProvider, root: Path) -> tuple[Any, list[AgentStep]]:
    steps: list[AgentStep] = []

    async def sink(step: AgentStep) -> None:
        steps.append(step)

    loop = AgentLoop(
        role="engineer",
        client=client(provider),
        provider_name=provider.name,
        options=ChatOptions(model="the-model", max_tokens=256),
        system="You are terse.",
        tools=WorkspaceReader(root),
    )
    outcome = await loop.run("session-1", [ChatMessage.user("what does a.txt say?")], sink)
    return outcome, steps


async def test_the_same_tool_using_turn_completes_against_every_server(
    server: LLMStub, local: OpenAIProvider, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello from a.txt")
    server.server.reasoning = THOUGHT
    server.push(
        tool_reply(StubToolCall("read_file", {"path": "a.txt"}, id="call_1")),
        text_reply("a.txt says: ", "hello from a.txt"),
    )
    outcome, steps = await tool_turn(local, tmp_path)

    assert outcome.stop == "final", outcome.error
    assert outcome.text == "a.txt says: hello from a.txt"
    assert "SECRET-THOUGHT" not in outcome.text
    assert not any("SECRET" in str(step.data) for step in steps if step.kind == "text_delta")
    assert server.server.name is not None and local.profile is not None
    assert local.profile.name == DETECTED[server.server.name]
    assert server.server.probes == 1 and server.server.tools_ignored == 0
    assert server.server.empty_streams == 0
    first, second = (r.body for r in server.requests if r.path == PATH)
    assert first["tools"] and second["tools"]
    # llama-cpp-python cannot stream a tool call: asked whole, without stream_options.
    streamed = server.server.name != "llama-cpp-python"
    assert bool(first.get("stream")) is streamed and bool(second.get("stream")) is streamed
    assert ("stream_options" in first) is streamed
    assert "parallel_tool_calls" not in first  # o-series refuse it; defaults allow parallel
    # The second request carries the call and its result, in a shape this server takes.
    call, result = second["messages"][-2:]
    assert call["role"] == "assistant" and call["tool_calls"][0]["id"] == "call_1"
    assert result == {"role": "tool", "tool_call_id": "call_1", "content": "hello from a.txt"}
    limit_field = local.profile.token_limit_field
    assert first[limit_field] == 256 and second[limit_field] == 256


@pytest.mark.parametrize("profile", REASONING_PROFILES)
async def test_reasoning_is_its_own_event_and_never_the_answer(profile: StubProfile) -> None:
    with LLMStub(profile=profile) as stub:
        stub.server.reasoning = THOUGHT
        stub.push(text_reply("The answer."))
        provider = OpenAIProvider(TEST_KEY, stub.openai_base_url, name="local", timeout_s=10.0)
        events: list[StreamEvent] = []
        request = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
        try:
            result = await client(provider).run(request, events.append)
        finally:
            await provider.aclose()
    assert result.text == "The answer."
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thought == THOUGHT
    assert "SECRET" not in "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_usage_comes_from_the_servers_that_send_it(
    server: LLMStub, local: OpenAIProvider
) -> None:
    server.push(text_reply("ok"))
    events: list[StreamEvent] = []
    request = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
    await client(local).run(request, events.append)
    reported = [e.usage for e in events if isinstance(e, UsageReported)]
    if server.server.name == "llama-cpp-python":  # asked for, never sent: no usage event
        assert reported == []
    else:
        assert [u.output_tokens for u in reported] == [7]


def config_for(stub: LLMStub, tmp_path: Path, profile: ProfileSetting) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{stub.openai_base_url}"\n'
        f'profile = "{profile}"\n'
    )
    return path


async def test_the_configured_profile_wins_over_the_servers_answer(tmp_path: Path) -> None:
    with LLMStub(profile="llama-cpp-python") as stub:
        config = load_config(config_for(stub, tmp_path, "openai"), env={})
        provider = build_provider(config, "local")
        assert isinstance(provider, OpenAIProvider)
        assert provider.profile is not None and provider.profile.name == "openai"
        stub.push(text_reply("never sent"))
        request = ChatRequest(
            messages=[ChatMessage.user("hi")], options=ChatOptions(model="m", max_tokens=64)
        )
        try:  # the wrong profile, honoured: llama-cpp-python would drop the limit
            with pytest.raises(ProviderRequestError, match="max_completion_tokens"):
                await client(provider).run(request, lambda _event: None)
        finally:
            await provider.aclose()
        assert stub.server.probes == 0


async def test_auto_in_the_config_asks_the_server(tmp_path: Path) -> None:
    with LLMStub(profile="ollama") as stub:
        provider = build_provider(load_config(config_for(stub, tmp_path, "auto"), env={}), "local")
        assert isinstance(provider, OpenAIProvider) and provider.profile is None
        stub.push(text_reply("ok"), text_reply("ok again"))
        request = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
        try:
            await client(provider).run(request, lambda _event: None)
            await client(provider).run(request, lambda _event: None)
        finally:
            await provider.aclose()
        assert provider.profile is not None and provider.profile.name == "ollama"
        assert stub.server.probes == 1  # asked once, remembered


async def test_a_server_without_a_model_list_gets_the_generic_profile(
    llm_stub: LLMStub, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello")
    llm_stub.push(tool_reply(StubToolCall("read_file", {"path": "a.txt"})), text_reply("done"))
    provider = OpenAIProvider(TEST_KEY, llm_stub.openai_base_url, name="local", timeout_s=10.0)
    try:
        outcome, _ = await tool_turn(provider, tmp_path)
    finally:
        await provider.aclose()
    assert outcome.stop == "final" and outcome.text == "done"
    assert provider.profile is not None and provider.profile.name == "generic"
    assert llm_stub.server.probes == 1  # the 404 is an answer: not asked again
    first = next(r.body for r in llm_stub.requests if r.path == PATH)
    assert first["max_tokens"] == 256 and first["tool_choice"] == "auto"
    assert "max_completion_tokens" not in first


class GarbledModels(ServerPlay):
    def models(self) -> tuple[int, Any]:
        self.probes += 1
        return 200, ["not", {"a": "model list"}, 42]


async def test_a_garbled_model_list_is_generic_and_the_turn_goes_on(llm_stub: LLMStub) -> None:
    llm_stub.server = GarbledModels("vllm")
    llm_stub.push(text_reply("fine"))
    provider = OpenAIProvider(TEST_KEY, llm_stub.openai_base_url, name="local", timeout_s=10.0)
    request = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
    try:
        result = await client(provider).run(request, lambda _event: None)
    finally:
        await provider.aclose()
    assert result.text == "fine"
    assert provider.profile is not None and provider.profile.name == "generic"


async def test_a_refused_probe_is_asked_again_and_the_error_is_the_requests() -> None:
    provider = OpenAIProvider(TEST_KEY, f"{LLMStub.unused_url()}/v1", name="local", timeout_s=5)
    request = ChatRequest(messages=[ChatMessage.user("hi")], options=ChatOptions(model="m"))
    policy = RetryPolicy(max_attempts=1, base_delay=0.01, max_delay=0.02)
    try:
        with pytest.raises(ProviderConnectionError, match="cannot connect"):
            await ModelClient(provider, policy=policy).run(request, lambda _event: None)
    finally:
        await provider.aclose()
    assert provider.profile is None  # nothing was learnt; the next turn asks again


async def test_api_openai_com_is_never_probed() -> None:
    provider = OpenAIProvider(TEST_KEY, "https://api.openai.com/v1", name="openai")
    assert provider.profile is not None and provider.profile.name == "openai"
    await provider.aclose()
