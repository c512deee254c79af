"""A model's reasoning through the engine (issue 14): relayed live, stored with the
answer apart from its text, exported, and never sent back as what the assistant said.

The real ``openai`` SDK talks to the stub playing vLLM (reasoning in its own ``reasoning``
field of each chunk) and the Responses API (a reasoning summary).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from backend.archive.store import DB_NAME
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.events import AgentStepEvent, EngineEvent
from backend.messages import MessageType
from sylk_tui import export
from tests.stubs.llm_script import StubToolCall, text_reply, tool_reply
from tests.stubs.llm_stub import LLMStub
from tests.stubs.responses_stub import ResponsesReply
from tests.support.engine_env import engine_env

KEY = "sk-reason-0123456789abcdef"
THOUGHT = "SECRET-THOUGHT: the README holds the answer, so I read it first."
READ = {"op": "librarian.file.read", "args": {"path": "README.md"}}


@pytest.fixture
def vllm() -> Iterator[LLMStub]:
    with LLMStub(profile="vllm") as stub:
        stub.server.reasoning = THOUGHT
        yield stub


async def _engine(stub: LLMStub, data_dir: Path, workspace: Path, api: str) -> Engine:
    (workspace / "README.md").write_text("Sylk test workspace: the answer is 42.\n")
    config = data_dir.parent / "config.toml"
    config.write_text(
        f'[providers.openai]\nbase_url = "{stub.openai_base_url}"\napi = "{api}"\n'
        "\n[retry]\nbase_delay_s = 0.01\n"
    )
    settings = load_config(config, env=engine_env(OPENAI_API_KEY=KEY))
    engine_config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="openai")
    return Engine.from_parts(build(engine_config, settings))


@pytest.fixture
async def engine(vllm: LLMStub, data_dir: Path, workspace: Path) -> AsyncIterator[Engine]:
    engine = await _engine(vllm, data_dir, workspace, "chat")
    try:
        yield engine
    finally:
        await engine.aclose()


async def test_an_answer_keeps_its_reasoning_apart_from_its_text(
    engine: Engine, vllm: LLMStub, data_dir: Path
) -> None:
    vllm.push(
        tool_reply(StubToolCall("execute", READ, id="call_readme"), text=("Let me read it.",)),
        text_reply("It says ", "42."),
    )
    seen: list[EngineEvent] = []
    engine.events.add_listener(seen.append)
    session = await engine.ensure_session()
    reply = (await engine.submit(session.id, "@architect What does the README say?"))[-1]

    assert reply.type is MessageType.AGENT_REPLY and reply.payload["stop"] == "final"
    assert reply.payload["text"] == "Let me read it.\n\nIt says 42."
    # Each of the turn's two model calls reasoned; both are kept, joined.
    assert reply.payload["reasoning"] == f"{THOUGHT}\n\n{THOUGHT}"
    live = [
        e.step.data["text"]
        for e in seen
        if isinstance(e, AgentStepEvent) and e.step.kind == "reasoning_delta"
    ]
    assert "".join(live) == THOUGHT * 2
    # Published live, never stored piecemeal: no reasoning step row in the archive.
    with sqlite3.connect(data_dir / DB_NAME) as db:
        kinds = {row[0] for row in db.execute("SELECT kind FROM agent_steps")}
        stored = [json.loads(row[0]) for row in db.execute("SELECT data FROM agent_steps")]
    assert "reasoning_delta" not in kinds and "final" in kinds
    assert not any("SECRET-THOUGHT" in json.dumps(row) for row in stored)
    # The reasoning survives in the archive, with the answer.
    [kept] = [m for m in await engine.transcript(session.id) if m.id == reply.id]
    assert kept.payload["reasoning"] == reply.payload["reasoning"]

    # The next turn's model reads the answer, never the reasoning.
    vllm.push(text_reply("Yes."))
    await engine.submit(session.id, "@architect sure?")
    sent = json.dumps(vllm.requests[-1].body["messages"])
    assert "It says 42." in sent and "SECRET-THOUGHT" not in sent


async def test_the_export_shows_the_reasoning_before_the_answer(
    engine: Engine, vllm: LLMStub
) -> None:
    vllm.push(text_reply("Forty-two."))
    session = await engine.ensure_session()
    await engine.submit(session.id, "@architect the answer?")
    transcript = await engine.transcript(session.id)
    md = export.render(session, transcript, "md")
    document = json.loads(export.render(session, transcript, "json"))

    assert f"> *Reasoning*\n>\n> {THOUGHT}\n\nForty-two." in md
    [answer] = [m for m in document["messages"] if m["type"] == "AGENT_REPLY"]
    assert answer["payload"]["reasoning"] == THOUGHT
    assert answer["payload"]["text"] == "Forty-two."


async def test_a_responses_api_reasoning_summary_is_kept_with_the_answer(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    engine = await _engine(llm_stub, data_dir, workspace, "responses")
    try:
        llm_stub.push(ResponsesReply(text=["It is ", "42."], reasoning=["Sum ", "the parts."]))
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@architect the answer?"))[-1]
    finally:
        await engine.aclose()
    assert llm_stub.requests[0].path == "/v1/responses"
    assert reply.payload["text"] == "It is 42."
    assert reply.payload["reasoning"] == "Sum the parts."
