"""How a turn ends when the model misbehaves or the server says little (issue 14, defects
4, 5 and 7), through the Engine with the real SDKs over HTTP to the stub.

* Malformed tool-call arguments are sent back to the model as that call's result, once;
  a second malformed reply ends the turn with a clear error, keeping the answer so far.
* An answer cut at the output limit is stored as truncated: the reply, the transcript
  and the step row say so, and a tool call cut with it is never run nor retried.
* A reply with no text and no tool call is asked again once with no tool allowed, then
  is an error, never an empty answer.
* A server that sends no usage gets a local count, marked estimated in the step, the
  archive's usage row and /status.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.archive.store import DB_NAME
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.messages import MessageType
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env

KEY = "sk-live-0123456789abcdefXYZ"
README = "Sylk test workspace: the answer is 42.\n"
READ_README = {"op": "librarian.file.read", "args": {"path": "README.md"}}
BROKEN = '{"path": "a.txt"'  # what a small model sent: the object never closed
CUT_STOPS = {"anthropic": "max_tokens", "openai": "length"}


def _env(vendor: str, stub: LLMStub) -> dict[str, str]:
    if vendor == "anthropic":
        return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}


@pytest.fixture
def parts(llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path) -> EngineParts:
    (workspace / "README.md").write_text(README)
    settings = load_config(None, env=engine_env(_env(vendor, llm_stub)))
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider=vendor)
    return build(config, settings)


@pytest.fixture
async def engine(parts: EngineParts) -> AsyncIterator[Engine]:
    engine = Engine.from_parts(parts)
    try:
        yield engine
    finally:
        await engine.aclose()


async def _ask(
    engine: Engine, text: str, kind: MessageType = MessageType.AGENT_REPLY
) -> tuple[str, dict[str, Any]]:
    session = await engine.ensure_session()
    reply = (await engine.submit(session.id, "@architect " + text))[-1]
    assert reply.type is kind, reply.payload
    stored = (await engine.transcript(session.id))[-1]
    assert stored.payload["text"] == reply.payload["text"]  # what was shown was kept
    return session.id, dict(reply.payload)


def _steps(parts: EngineParts, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    rows = parts.archive.load_steps(session_id)
    return [(r["kind"], json.loads(r["data"])["data"]) for r in rows]


def _id(vendor: str, n: int) -> str:
    """A call id unique in the turn, as the real APIs give (the stub numbers per reply)."""
    return f"toolu_{n:02d}" if vendor == "anthropic" else f"call_{n:02d}"


def _tool_result_sent(vendor: str, body: dict[str, Any]) -> tuple[str, bool | None]:
    """The tool result a follow-up request carried back: its text and error flag."""
    last = body["messages"][-1]
    if vendor == "anthropic":
        [block] = [b for b in last["content"] if b["type"] == "tool_result"]
        content = block["content"]
        text = content if isinstance(content, str) else "".join(c["text"] for c in content)
        return text, block.get("is_error")
    assert last["role"] == "tool"
    return str(last["content"]), None


async def test_malformed_arguments_go_back_to_the_model_which_corrects_itself(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, vendor: str, llm_path: str
) -> None:
    llm_stub.push(
        Reply(
            text=["Reading."],
            tool_calls=[StubToolCall("execute", raw_arguments=BROKEN, id=_id(vendor, 1))],
        ),
        Reply(tool_calls=[StubToolCall("execute", arguments=READ_README, id=_id(vendor, 2))]),
        Reply(text=["The README says 42."]),
    )
    session_id, reply = await _ask(engine, "what does the README say?")
    assert reply["stop"] == "final", reply
    assert reply["text"] == "Reading.\n\nThe README says 42."
    assert llm_stub.count(llm_path) == 3

    said, is_error = _tool_result_sent(vendor, llm_stub.requests[1].body)
    assert "was not run" in said and "not valid JSON" in said and BROKEN in said
    assert "again with its arguments as one JSON object" in said
    assert is_error in (True, None)  # Anthropic flags it; OpenAI has no flag
    good, _ = _tool_result_sent(vendor, llm_stub.requests[2].body)
    assert "the answer is 42" in good

    steps = _steps(parts, session_id)
    calls = [data for kind, data in steps if kind == "tool_call"]
    assert calls[0]["arguments"] == {} and BROKEN in calls[0]["arguments_error"]
    assert "arguments_error" not in calls[1]
    results = [data for kind, data in steps if kind == "tool_result"]
    assert results[0]["is_error"] and not results[1]["is_error"]
    assert [a["status"] for a in reply["actions"]] == ["error", "ok"]


async def test_a_second_malformed_reply_ends_the_turn_clearly(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, llm_path: str
) -> None:
    llm_stub.push(
        Reply(text=["Trying."], tool_calls=[StubToolCall("execute", raw_arguments=BROKEN)]),
        Reply(text=["Again."], tool_calls=[StubToolCall("execute", raw_arguments="[1, 2]")]),
        Reply(text=["never asked for"]),
    )
    session_id, reply = await _ask(engine, "read the README", MessageType.SYSTEM_NOTICE)
    assert reply["stop"] == "error"
    said = (
        "the model sent malformed tool-call arguments twice (tool execute: its arguments are "
        "a JSON list, not an object: [1, 2]); try again or use a stronger model"
    )
    assert reply["error"] == said
    assert reply["text"].startswith(f"The architect could not answer: {said}")
    assert reply["answer"] == "Trying.\n\nAgain."  # nothing answered so far is lost
    assert reply["text"].endswith("Trying.\n\nAgain.")
    assert llm_stub.count(llm_path) == 2
    kind, data = _steps(parts, session_id)[-1]
    assert kind == "error" and data["error_type"] == "MalformedToolArguments"
    assert "Traceback" not in data["error"]


NO_TOOL_SENT = {"anthropic": {"type": "none"}, "openai": "none"}


async def test_an_empty_reply_is_asked_again_for_text_alone(
    engine: Engine, llm_stub: LLMStub, vendor: str, llm_path: str
) -> None:
    # llama-cpp-python with tools offered cannot write text: a reply with neither.
    llm_stub.push(Reply(text=[]), Reply(text=["notes.txt says hello."]))
    _, reply = await _ask(engine, "what is in notes.txt?")
    assert reply["stop"] == "final" and reply["text"] == "notes.txt says hello."
    assert llm_stub.count(llm_path) == 2
    first, second = (r.body for r in llm_stub.requests[-2:])
    assert "tool_choice" not in first or first["tool_choice"] != NO_TOOL_SENT[vendor]
    assert second["tool_choice"] == NO_TOOL_SENT[vendor] and second["tools"]  # still listed
    assert len(second["messages"]) == len(first["messages"])  # no empty assistant message


async def test_an_empty_answer_is_an_error_not_an_answer(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, llm_path: str
) -> None:
    llm_stub.push(Reply(text=[]), Reply(text=[]))
    session_id, reply = await _ask(engine, "what is in notes.txt?", MessageType.SYSTEM_NOTICE)
    assert reply["stop"] == "error"
    assert "without an answer (no text and no tool call)" in reply["error"]
    assert reply["text"].startswith("The architect could not answer: the model ended its turn")
    assert llm_stub.count(llm_path) == 2  # asked once more, for text alone
    kind, data = _steps(parts, session_id)[-1]
    assert kind == "error" and data["error_type"] == "EmptyAnswer"


async def test_a_truncated_answer_is_stored_as_truncated(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, vendor: str
) -> None:
    llm_stub.push(Reply(text=["The first half ", "of a long"], stop_reason=CUT_STOPS[vendor]))
    session_id, reply = await _ask(engine, "explain everything")
    assert reply["stop"] == "truncated"
    assert reply["text"] == "The first half of a long\n\n(truncated)"
    assert "answer truncated at the model's output limit (max_tokens 4096)" in reply["error"]
    kind, data = _steps(parts, session_id)[-1]
    assert kind == "truncated" and data["text"] == reply["text"]
    assert "max_tokens 4096" in data["error"]


async def test_a_tool_call_cut_at_the_limit_is_a_truncation_not_a_retry(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, vendor: str, llm_path: str
) -> None:
    cut = StubToolCall("execute", raw_arguments='{"op": "librarian.file.read", "args": {"pa')
    llm_stub.push(Reply(text=["Let me"], tool_calls=[cut], stop_reason=CUT_STOPS[vendor]))
    llm_stub.push(Reply(text=["never asked for"]))
    session_id, reply = await _ask(engine, "read it")
    assert reply["stop"] == "truncated" and reply["text"] == "Let me\n\n(truncated)"
    assert llm_stub.count(llm_path) == 1
    assert "tool_call" not in [kind for kind, _ in _steps(parts, session_id)]


def _usage_rows(data_dir: Path) -> list[tuple[int, int, int]]:
    with sqlite3.connect(data_dir / DB_NAME) as conn:
        query = "SELECT input_tokens, output_tokens, estimated FROM usage ORDER BY seq"
        return [tuple(r) for r in conn.execute(query)]


@pytest.mark.parametrize("vendor", ["openai"])
async def test_usage_a_server_did_not_report_is_estimated(
    engine: Engine, parts: EngineParts, llm_stub: LLMStub, data_dir: Path
) -> None:
    llm_stub.push(
        Reply(tool_calls=[StubToolCall("execute", arguments=READ_README)], include_usage=False),
        Reply(text=["The README ", "says 42."]),  # this server does report usage
    )
    session_id, reply = await _ask(engine, "what does the README say?")
    assert reply["stop"] == "final"
    usage_steps = [data for kind, data in _steps(parts, session_id) if kind == "usage"]
    first, second = (step["usage"] for step in usage_steps)
    assert first["estimated"] and first["input_tokens"] > 100 and first["output_tokens"] > 5
    assert not second["estimated"] and second["input_tokens"] == 12  # the stub's figure
    assert reply["usage"]["estimated"]  # the turn's sum has an estimated part
    [(_, _, one), (_, _, two)] = _usage_rows(data_dir)
    assert (one, two) == (1, 0)
    line = engine.usage(session_id).status_line()
    assert line.startswith("~") and "(1 of 2 calls estimated)" in line
