"""Prompt caching end to end: the Anthropic adapter's cache_control breakpoints, the
cached tokens both adapters read from usage, and the stub that plays the vendors'
documented caching (minimum length, breakpoints, look-back, time to live)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from backend.llm.anthropic_adapter import AnthropicProvider
from backend.llm.client import ModelClient
from backend.llm.provider import Provider
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    ChatResult,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)
from tests.integration.conftest import make_provider
from tests.stubs import LLMStub, text_reply
from tests.stubs.prompt_cache import PromptCache, seen_before_share, tokens

LONG_SYSTEM = "You are the engineer. " + "Follow the house rules. " * 400  # ~2,400 tokens
TOOLS = [
    ToolSpec(
        name=f"tool_{n}",
        description="A tool.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    for n in range(3)
]
CALL = ToolCall(id="toolu_1", name="tool_0", arguments={"path": "a.py"})


def request(*messages: ChatMessage, system: str = LONG_SYSTEM) -> ChatRequest:
    return ChatRequest(
        system=system, messages=list(messages), tools=TOOLS, options=ChatOptions(model="m")
    )


def steps() -> list[ChatRequest]:
    """Three requests of one tool-using turn, then the next turn's first request."""
    ask = ChatMessage.user("fix a.py")
    called = ChatMessage.assistant("", [CALL])
    result = ChatMessage(
        role="user", content=[ToolResultBlock(tool_call_id="toolu_1", content="x = 1\n" * 50)]
    )
    return [
        request(ask),
        request(ask, called, result),
        request(ask, called, result, ChatMessage.assistant("Fixed."), ChatMessage.user("thanks")),
    ]


async def run(provider: Provider, chat: ChatRequest) -> ChatResult:
    return await ModelClient(provider).run(chat)


def markers(body: dict[str, Any]) -> list[str]:
    """Where the request put cache_control: tool names, 'system', message indexes."""
    found = [t["name"] for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        found.append("system")
    for n, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list) and any("cache_control" in b for b in content):
            found.append(f"message {n}")
    return found


async def test_anthropic_breakpoints_sit_on_the_stable_prefix_and_roll_with_the_turn(
    llm_stub: LLMStub,
) -> None:
    llm_stub.prompt_cache = PromptCache()
    llm_stub.push(*[text_reply("ok") for _ in range(3)])
    provider = make_provider("anthropic", llm_stub.base_url)
    try:
        first, second, third = [await run(provider, r) for r in steps()]
    finally:
        await provider.aclose()
    bodies = [r.body for r in llm_stub.requests]
    assert markers(bodies[0]) == ["tool_2", "system", "message 0"]
    assert markers(bodies[1]) == ["tool_2", "system", "message 2"]
    # The next turn: the end of the conversation before its request, and the request.
    assert markers(bodies[2]) == ["tool_2", "system", "message 3", "message 4"]
    assert all(len(markers(b)) <= 4 for b in bodies)
    # First sight writes the prefix; each later request reads what the one before wrote.
    assert first.usage.cache_read_tokens == 0 and first.usage.cache_write_tokens > 2000
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert third.usage.cache_read_tokens == (
        second.usage.cache_read_tokens + second.usage.cache_write_tokens
    )
    assert third.usage.input_tokens < third.usage.cache_read_tokens // 10


async def test_prompt_cache_off_sends_no_marker_and_reads_nothing(llm_stub: LLMStub) -> None:
    llm_stub.prompt_cache = PromptCache()
    llm_stub.push(*[text_reply("ok") for _ in range(3)])
    provider = AnthropicProvider("k", llm_stub.base_url, prompt_cache=False)
    try:
        results = [await run(provider, r) for r in steps()]
    finally:
        await provider.aclose()
    assert all(markers(r.body) == [] for r in llm_stub.requests)
    assert isinstance(llm_stub.requests[0].body["system"], str)
    assert sum(r.usage.cache_read_tokens + r.usage.cache_write_tokens for r in results) == 0


async def test_openai_reads_cached_tokens_out_of_the_prompt_tokens(llm_stub: LLMStub) -> None:
    llm_stub.prompt_cache = PromptCache()
    llm_stub.push(*[text_reply("ok") for _ in range(3)])
    provider = make_provider("openai", llm_stub.base_url)
    try:
        first, second, third = [await run(provider, r) for r in steps()]
    finally:
        await provider.aclose()
    assert first.usage.cache_read_tokens == 0
    # Automatic: the longest prefix seen before, in 128-token steps from 1024.
    for later in (second, third):
        read = later.usage.cache_read_tokens
        assert read >= 1024 and (read - 1024) % 128 == 0
        assert later.usage.input_tokens < 128 + 200  # the rest: the new messages
    assert all("cache_control" not in json.dumps(r.body) for r in llm_stub.requests)


# -- the stub's cache, as the vendors document it --------------------------------------
def anthropic_body(system: str, *texts: str, marks: tuple[int, ...] = ()) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for n, text in enumerate(texts):
        block: dict[str, Any] = {"type": "text", "text": text}
        if n in marks:
            block["cache_control"] = {"type": "ephemeral"}
        messages.append({"role": "user" if n % 2 == 0 else "assistant", "content": [block]})
    marked = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    return {"model": "claude-sonnet-4-6", "system": marked, "messages": messages}


def test_the_stub_caches_only_from_the_minimum_length_and_for_five_minutes() -> None:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    short = anthropic_body("Be brief.", "hi")
    assert cache.anthropic(short).cache_write_tokens == 0  # under 1024 tokens: not cached
    assert cache.anthropic(short).cache_read_tokens == 0
    body = anthropic_body(LONG_SYSTEM, "hi")
    written = cache.anthropic(body).cache_write_tokens
    assert written == tokens("system" + json.dumps({"type": "text", "text": LONG_SYSTEM},
                                                   separators=(",", ":")))  # fmt: skip
    now[0] = 299.0
    assert cache.anthropic(body).cache_read_tokens == written  # read, and refreshed
    now[0] = 598.0
    assert cache.anthropic(body).cache_read_tokens == written
    now[0] = 899.0  # five minutes unused: gone, written again
    again = cache.anthropic(body)
    assert again.cache_read_tokens == 0 and again.cache_write_tokens == written
    haiku = {**anthropic_body("x" * 6000, "hi"), "model": "claude-haiku-4-5"}  # ~1,500 tokens
    assert cache.anthropic(haiku).cache_write_tokens == 0  # Haiku needs 2048


def test_the_stub_reads_at_breakpoints_looking_back_twenty_blocks() -> None:
    cache = PromptCache()
    texts = [f"message {n}" for n in range(30)]
    cache.anthropic(anthropic_body(LONG_SYSTEM, *texts[:5], marks=(4,)))
    near = cache.anthropic(anthropic_body(LONG_SYSTEM, *texts[:20], marks=(19,)))
    assert near.cache_read_tokens > tokens(LONG_SYSTEM)  # found 15 blocks back
    far = cache.anthropic(anthropic_body(LONG_SYSTEM, *texts[:30], marks=(29,)))
    # 30 - 20 = block 10 is the furthest it looks: the write at 20 was read, not the one at 5.
    assert far.cache_read_tokens == near.cache_read_tokens + near.cache_write_tokens
    unmarked = PromptCache()
    unmarked.anthropic(anthropic_body(LONG_SYSTEM, "a"))
    plain = {**anthropic_body(LONG_SYSTEM, "a"), "system": LONG_SYSTEM}  # no marker at all
    assert unmarked.anthropic(plain).cache_read_tokens == 0


def test_the_stub_refuses_more_than_four_breakpoints(llm_stub: LLMStub) -> None:
    llm_stub.prompt_cache = PromptCache()
    body = anthropic_body(LONG_SYSTEM, "a", "b", "c", "d", "e", marks=(0, 1, 2, 3))
    post = urllib.request.Request(
        f"{llm_stub.base_url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=10)
    assert refused.value.code == 400
    error = json.loads(refused.value.read())["error"]
    assert error["type"] == "invalid_request_error"
    assert "A maximum of 4 blocks with cache_control may be provided" in error["message"]


async def test_prompt_cache_key_goes_to_openai_only(llm_stub: LLMStub) -> None:
    from backend.llm.openai_chat import OpenAIProvider

    keyed = request(ChatMessage.user("hi")).model_copy(
        update={"options": ChatOptions(model="m", cache_key="sylk-0123abcd")}
    )
    sent: dict[str, Any] = {}
    for label, options in {
        "openai": {"profile": "openai"},
        "llama-cpp": {"profile": "llama-cpp"},
        "off": {"profile": "openai", "prompt_cache": False},
    }.items():
        llm_stub.push(text_reply("ok"))
        provider = OpenAIProvider("k", llm_stub.openai_base_url, **options)
        try:
            await run(provider, keyed)
        finally:
            await provider.aclose()
        sent[label] = llm_stub.requests[-1].body.get("prompt_cache_key")
    assert sent == {"openai": "sylk-0123abcd", "llama-cpp": None, "off": None}


def test_the_ceiling_counts_what_repeats_the_start_of_an_earlier_prompt() -> None:
    assert seen_before_share(["abcd", "abXY", "abcdef"]) == (0 + 2 + 4) / 14
    assert seen_before_share([]) == 0.0
