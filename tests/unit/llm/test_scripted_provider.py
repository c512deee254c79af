"""The scripted provider plays its file turn by turn, and refuses a bad script clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.llm.errors import ProviderRequestError, ProviderUnavailableError
from backend.llm.scripted import ScriptedProvider, ScriptError, load_script
from backend.llm.types import (
    ChatMessage,
    ChatOptions,
    ChatRequest,
    StreamEvent,
    StreamStopped,
    TextDelta,
    ToolCallCompleted,
)

YAML_SCRIPT = """
turns:
  - expect: readme
    text: Let me look at it.
    tool_calls:
      - name: read_file
        arguments: {path: README.md}
  - text: It says hello.
    usage: {input_tokens: 40, output_tokens: 5}
  - error: {kind: unavailable, message: overloaded}
"""


def _request(text: str) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage.user(text)], options=ChatOptions(model="scripted"))


async def _play(provider: ScriptedProvider, text: str) -> list[StreamEvent]:
    return [event async for event in provider.stream(_request(text))]


async def test_turns_play_in_order(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_text(YAML_SCRIPT)
    provider = ScriptedProvider.from_file(path)
    first = await _play(provider, "Summarise the README please")
    text = "".join(e.text for e in first if isinstance(e, TextDelta))
    assert text == "Let me look at it."
    calls = [e.call for e in first if isinstance(e, ToolCallCompleted)]
    assert calls[0].name == "read_file" and calls[0].arguments == {"path": "README.md"}
    assert isinstance(first[-1], StreamStopped) and first[-1].reason == "tool_use"
    second = await _play(provider, "tool output")
    assert isinstance(second[-1], StreamStopped) and second[-1].reason == "end_turn"
    with pytest.raises(ProviderUnavailableError, match="overloaded"):
        await _play(provider, "again")
    with pytest.raises(ProviderRequestError, match="has no turn 4"):
        await _play(provider, "and again")


async def test_expectation_mismatch_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps({"turns": [{"expect": "deploy", "text": "ok"}]}))
    provider = ScriptedProvider.from_file(path)
    with pytest.raises(ProviderRequestError, match="expected 'deploy'"):
        await _play(provider, "something else")


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("bad.json", "{not json", "does not parse"),
        ("bad.yaml", "turns: [", "does not parse"),
        ("empty.json", '{"turns": []}', "turns"),
        ("typo.json", '{"turns": [{"txt": "hi"}]}', "turns.0.txt"),
    ],
)
def test_bad_scripts(tmp_path: Path, name: str, content: str, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ScriptError) as info:
        load_script(path)
    assert fragment in str(info.value)


def test_missing_script(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read script"):
        load_script(tmp_path / "nope.yaml")
