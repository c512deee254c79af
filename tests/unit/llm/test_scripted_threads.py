"""Threads of a script: concurrent conversations each play their own turns, in order,
whatever the order their calls arrive in; a request that matches two threads, or none
without a fallback, is a typed error; scripts without threads play as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from backend.llm.errors import ProviderRequestError
from backend.llm.scripted import ScriptedProvider, ScriptError, ScriptThreadError, load_script
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    TextDelta,
    ToolCallCompleted,
    ToolResultBlock,
)

THREADED = """
turns:
  - text: the architect speaks
threads:
  e1:
    match: "Task e1 of plan"
    turns:
      - {text: e1 reads, tool_calls: [{name: read, arguments: {path: a.py}}]}
      - {expect: "contents of a.py", text: e1 done}
  e2:
    match: "Task e2 of plan"
    turns:
      - {text: e2 done}
"""


def _request(*messages: ChatMessage) -> ChatRequest:
    return ChatRequest(messages=list(messages), options=ChatOptions(model="scripted"))


async def _said(provider: ScriptedProvider, request: ChatRequest) -> tuple[str, list[str]]:
    events = [event async for event in provider.stream(request)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text, [e.call.id for e in events if isinstance(e, ToolCallCompleted)]


def _provider(tmp_path: Path, content: str | dict[str, Any]) -> ScriptedProvider:
    path = tmp_path / ("s.yaml" if isinstance(content, str) else "s.json")
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return ScriptedProvider.from_file(path)


def _history(*lines: str) -> list[ChatMessage]:
    """An earlier exchange of the session: every node's conversation starts with it."""
    return [ChatMessage.user(lines[0]), ChatMessage.assistant("Stored."), *map(ChatMessage.user,
            lines[1:])]  # fmt: skip


async def test_each_conversation_plays_its_own_thread_whatever_the_interleaving(
    tmp_path: Path,
) -> None:
    provider = _provider(tmp_path, THREADED)
    shared = "@architect add a --verbose flag"
    e1 = _request(*_history(shared, "Task e1 of plan p1: do e1"))
    e2 = _request(*_history(shared, "Task e2 of plan p1: do e2"))
    assert await _said(provider, e2) == ("e2 done", [])  # e2 first: its thread, not e1's
    text, calls = await _said(provider, e1)
    assert text == "e1 reads" and calls == ["call_e1_1_0"]
    tool_result = ChatMessage(
        role="user",
        content=[ToolResultBlock(tool_call_id="call_e1_1_0", content="contents of a.py")],
    )
    follow_up = _request(*e1.messages, ChatMessage.assistant("e1 reads"), tool_result)
    assert (await _said(provider, follow_up))[0] == "e1 done"  # matched on its request
    assert (await _said(provider, _request(ChatMessage.user(shared))))[0] == "the architect speaks"
    assert provider.played == {"turns": 1, "e1": 2, "e2": 1}
    assert provider.remaining == 0


async def test_concurrent_streams_each_get_their_threads_turns(tmp_path: Path) -> None:
    threads = {f"n{i}": {"match": f"node n{i}:", "turns": [{"text": f"n{i}-{k}"} for k in range(3)]}
               for i in range(4)}  # fmt: skip
    provider = _provider(tmp_path, {"threads": threads, "chunk_delay_s": 0.001})

    async def conversation(i: int) -> list[str]:
        return [(await _said(provider, _request(ChatMessage.user(f"node n{i}: go"))))[0]
                for _ in range(3)]  # fmt: skip

    said = await asyncio.gather(*(conversation(i) for i in range(4)))
    assert said == [[f"n{i}-{k}" for k in range(3)] for i in range(4)]


async def test_a_request_matching_two_threads_is_a_script_error(tmp_path: Path) -> None:
    provider = _provider(tmp_path, THREADED)
    both = _request(ChatMessage.user("Task e1 of plan p1, then Task e2 of plan p1"))
    with pytest.raises(ScriptThreadError, match="matches threads e1, e2") as info:
        await _said(provider, both)
    assert isinstance(info.value, ScriptError) and isinstance(info.value, ProviderRequestError)
    assert provider.played == {"turns": 0, "e1": 0, "e2": 0}  # nothing consumed


async def test_no_thread_and_no_fallback_is_a_script_error(tmp_path: Path) -> None:
    provider = _provider(tmp_path, {"threads": {"e1": {"turns": [{"text": "x"}]}}})
    with pytest.raises(ScriptThreadError, match="matches no thread"):
        await _said(provider, _request(ChatMessage.user("something else")))
    assert (await _said(provider, _request(ChatMessage.user("about E1 please"))))[0] == "x"


async def test_an_exhausted_thread_names_itself(tmp_path: Path) -> None:
    provider = _provider(tmp_path, THREADED)
    await _said(provider, _request(ChatMessage.user("Task e2 of plan p1")))
    with pytest.raises(ProviderRequestError, match="thread e2 has no turn 2: it holds 1"):
        await _said(provider, _request(ChatMessage.user("Task e2 of plan p1")))


async def test_an_expectation_mismatch_names_the_thread_and_turn(tmp_path: Path) -> None:
    script = {"threads": {"t": {"match": "go", "turns": [{"expect": "deploy", "text": "ok"}]}}}
    provider = _provider(tmp_path, script)
    with pytest.raises(ProviderRequestError, match="thread t turn 1 expected 'deploy'"):
        await _said(provider, _request(ChatMessage.user("go on")))


async def test_a_script_without_threads_plays_as_before(tmp_path: Path) -> None:
    provider = _provider(tmp_path, {"turns": [{"text": "one", "tool_calls": [{"name": "x"}]}]})
    assert await _said(provider, _request(ChatMessage.user("anything"))) == ("one", ["call_1_0"])
    assert provider.played == {"turns": 1}


@pytest.mark.parametrize(
    ("script", "fragment"),
    [
        ({"threads": {}}, "needs turns"),
        ({"threads": {"a": {"turns": []}}}, "threads.a.turns"),
        ({"threads": {"a": {"match": "", "turns": [{"text": "x"}]}}}, "threads.a.match"),
        (
            {
                "threads": {
                    "a": {"match": "X", "turns": [{"text": "x"}]},
                    "b": {"match": "x", "turns": [{"text": "y"}]},
                }
            },
            "same match",
        ),
        ({"threads": {"turns": {"turns": [{"text": "x"}]}}}, "name the thread otherwise"),
        ({"threads": {"a": {"turns": [{"text": "x"}], "extra": 1}}}, "threads.a.extra"),
    ],
)
def test_bad_threads_are_refused_when_loaded(
    tmp_path: Path, script: dict[str, Any], fragment: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(script))
    with pytest.raises(ScriptError) as info:
        load_script(path)
    assert fragment in str(info.value)


async def test_a_paused_turn_answers_after_its_pause_and_can_be_cancelled(tmp_path: Path) -> None:
    script = {"turns": [{"pause_s": 3600, "text": "late"}, {"text": "next"}]}
    provider = _provider(tmp_path, script)
    thinking = asyncio.create_task(_said(provider, _request(ChatMessage.user("go"))))
    await asyncio.sleep(0)
    assert not thinking.done()
    thinking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await thinking
    assert (await _said(provider, _request(ChatMessage.user("go"))))[0] == "next"
