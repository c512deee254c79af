"""Whole agent turns through the Engine: the real SDKs over HTTP to the stub, and scripts.

Each turn asks for a tool (``librarian.file.read`` through ``execute``), gets its
result back, and answers. The archive must hold each step exactly once, usage per
call, and never the API key.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.events import AgentStepEvent, EngineEvent
from backend.messages import MessageType
from sylk_tui import export
from sylk_tui.logs import configure_logging
from tests.stubs.llm_script import Drop, Reply, Stall, Status, StreamFault, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.support.polling import finishes, until

KEY = "sk-live-0123456789abcdefXYZ"
README = "Sylk test workspace: the answer is 42.\n"
# The model reaches skills through the gateway's `execute` verb.
READ_README = {"op": "librarian.file.read", "args": {"path": "README.md"}}


def _env(vendor: str, stub: LLMStub) -> dict[str, str]:
    if vendor == "anthropic":
        return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}


@pytest.fixture
async def vendor_parts(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path
) -> EngineParts:
    (workspace / "README.md").write_text(README)
    settings = load_config(None, env=engine_env(_env(vendor, llm_stub))).model_copy(
        update={"retry": load_config(None, env={}).retry.model_copy(update={"base_delay_s": 0.01})}
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider=vendor)
    return build(config, settings)


@pytest.fixture
async def vendor_engine(vendor_parts: EngineParts) -> AsyncIterator[Engine]:
    engine = Engine.from_parts(vendor_parts)
    try:
        yield engine
    finally:
        await engine.aclose()


def _tool_then_answer() -> list[Reply]:
    return [
        Reply(
            text=["Let me ", "read it."],
            tool_calls=[StubToolCall(name="execute", arguments=READ_README)],
        ),
        Reply(text=["The README ", "says the answer ", "is 42."]),
    ]


def _kinds(parts: EngineParts, session_id: str) -> list[str]:
    return [row["kind"] for row in parts.archive.load_steps(session_id)]


async def test_a_turn_with_a_tool_call_over_real_http(
    vendor_engine: Engine,
    vendor_parts: EngineParts,
    llm_stub: LLMStub,
    vendor: str,
    llm_path: str,
) -> None:
    engine = vendor_engine
    llm_stub.push(_tool_then_answer())
    deltas: list[str] = []

    def watch(event: EngineEvent) -> None:
        if isinstance(event, AgentStepEvent) and event.step.kind == "text_delta":
            deltas.append(event.step.data["text"])

    engine.events.add_listener(watch)
    session = await engine.ensure_session()
    recorded = await engine.submit(session.id, "@architect " + "What does the README say?")
    reply = recorded[-1]
    assert reply.type is MessageType.AGENT_REPLY, reply.payload
    assert reply.payload["stop"] == "final"
    assert reply.payload["text"] == "Let me read it.\n\nThe README says the answer is 42."
    assert "".join(deltas) == "Let me read it.The README says the answer is 42."

    assert _kinds(vendor_parts, session.id) == [
        "model_call", "usage", "tool_call", "tool_result", "model_call", "usage", "final",
    ]  # fmt: skip
    steps = vendor_parts.archive.load_steps(session.id)
    result = next(r for r in steps if r["kind"] == "tool_result")
    assert "the answer is 42" in json.loads(result["data"])["data"]["content"]

    # The second request carried the tool's result back to the model.
    assert llm_stub.count(llm_path) == 2
    follow_up = json.dumps(llm_stub.requests[1].body)
    assert "the answer is 42" in follow_up
    offered = json.dumps(llm_stub.requests[0].body)
    assert '"execute"' in offered and '"search"' in offered  # the gateway verbs were offered

    usage = engine.usage(session.id)
    assert usage.calls == 2 and usage.total.input_tokens > 0
    assert usage.agents[0].agent == "architect" and usage.agents[0].provider == vendor


async def test_the_key_never_reaches_archive_logs_or_exports(
    vendor_engine: Engine, llm_stub: LLMStub, data_dir: Path, tmp_path: Path
) -> None:
    engine = vendor_engine
    log_path = configure_logging(data_dir, engine.redactor)
    llm_stub.push(_tool_then_answer())
    llm_stub.push(Status(401, message=f"invalid x-api-key {KEY}"))
    session = await engine.ensure_session()
    await engine.submit(session.id, "@architect " + "What does the README say?")
    await engine.submit(session.id, f"@architect my key is {KEY}, is that right?")
    await engine.submit(session.id, "@architect " + "again")  # the 401, whose body repeats the key
    transcript = await engine.transcript(session.id)
    exports = export.to_markdown(engine.get_session(session.id), transcript) + export.to_json(
        engine.get_session(session.id), transcript
    )
    await engine.aclose()
    assert llm_stub.requests[0].headers.get("x-api-key", KEY) == KEY or any(
        KEY in v for v in llm_stub.requests[0].headers.values()
    )  # the key really was used
    stored = b"".join(p.read_bytes() for p in sorted(data_dir.glob("*")))  # noqa: ASYNC240
    assert KEY.encode() not in stored
    assert KEY not in log_path.read_text()
    assert KEY not in exports
    assert "[redacted]" in exports


async def test_transient_failures_are_retried_and_written_once(
    vendor_engine: Engine, llm_stub: LLMStub, llm_path: str
) -> None:
    engine = vendor_engine
    llm_stub.push(Status(503), Status(529 if llm_path.endswith("messages") else 500))
    llm_stub.push(Reply(text=["fine now"]))
    session = await engine.ensure_session()
    reply = (await engine.submit(session.id, "@architect " + "hello"))[-1]
    assert reply.payload["text"] == "fine now"
    assert llm_stub.count(llm_path) == 3
    kinds = _kinds(engine, session.id)
    assert kinds.count("model_call") == 1 and kinds.count("usage") == 1
    assert kinds.count("retry") == 2
    assert engine.usage(session.id).calls == 1
    texts = [m.payload["text"] for m in await engine.transcript(session.id)]
    assert texts == ["@architect hello", "fine now"]


async def test_a_cut_stream_keeps_partial_text_and_runs_no_tool(
    vendor_engine: Engine, llm_stub: LLMStub, llm_path: str
) -> None:
    engine = vendor_engine
    llm_stub.push(
        Reply(
            text=["Half an ", "answer"],
            tool_calls=[StubToolCall(name="execute", arguments=READ_README)],
            fault=StreamFault(kind="reset", after_args=1),
        )
    )
    session = await engine.ensure_session()
    reply = (await engine.submit(session.id, "@architect " + "go"))[-1]
    assert reply.type is MessageType.AGENT_REPLY
    assert reply.payload["stop"] == "interrupted"
    assert reply.payload["text"] == "Half an answer"
    assert "tool_call" not in _kinds(engine, session.id)
    assert llm_stub.count(llm_path) == 1  # output had begun: no blind retry


async def test_provider_failure_is_reported_and_the_request_kept(
    vendor_engine: Engine, llm_stub: LLMStub, vendor: str, llm_path: str
) -> None:
    engine = vendor_engine
    llm_stub.push(Status(401, message="bad key"))
    session = await engine.ensure_session()
    reply = (await engine.submit(session.id, "@architect " + "hello"))[-1]
    assert reply.type is MessageType.SYSTEM_NOTICE and reply.payload["error"]
    assert f"{vendor.upper()}_API_KEY" in reply.payload["text"]
    assert llm_stub.count(llm_path) == 1
    assert (await engine.transcript(session.id))[0].payload["text"] == "@architect hello"


async def test_cancel_stops_the_stream_promptly(vendor_engine: Engine, llm_stub: LLMStub) -> None:
    engine = vendor_engine
    llm_stub.push(Reply(text=["first words ", "then "] + ["more "] * 50, delay_s=0.2))
    session = await engine.ensure_session()
    started = asyncio.Event()

    def watch(event: EngineEvent) -> None:
        if isinstance(event, AgentStepEvent) and event.step.kind == "text_delta":
            started.set()

    engine.events.add_listener(watch)
    turn = asyncio.create_task(engine.submit(session.id, "@architect " + "talk a lot"))
    await finishes(started.wait(), what="the first words")
    assert engine.turn_running(session.id)
    assert engine.cancel_turn(session.id)
    reply = (await finishes(turn, what="the cancelled turn to end"))[-1]
    assert reply.payload["stop"] == "cancelled"
    assert reply.payload["text"].startswith("first words")
    assert reply.payload["text"].count("more ") < 50  # cut short, not streamed to its end
    await until(lambda: llm_stub.aborted >= 1, what="the client to close the connection")
    assert not engine.cancel_turn(session.id)


async def test_connection_refused_is_a_clear_error(data_dir: Path, workspace: Path) -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": LLMStub.unused_url()}
    settings = load_config(None, env=engine_env(env))
    settings = settings.model_copy(
        update={"retry": settings.retry.model_copy(update={"base_delay_s": 0.01})}
    )
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    try:
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@architect " + "hello"))[-1]
        assert reply.type is MessageType.SYSTEM_NOTICE
        assert "could not answer" in reply.payload["text"]
        assert "attempt" in reply.payload["text"]
    finally:
        await engine.aclose()


async def test_a_scripted_turn_with_a_tool_call(data_dir: Path, workspace: Path) -> None:
    (workspace / "README.md").write_text(README)
    script = workspace.parent / "demo.yaml"
    script.write_text(
        "turns:\n"
        "  - expect: readme\n"
        "    text: Checking.\n"
        "    tool_calls: [{name: execute, arguments: "
        "{op: librarian.file.read, args: {path: README.md}}}]\n"
        "  - expect: answer is 42\n"
        "    text: It says 42.\n"
    )
    settings = load_config(None, env=engine_env(SYLK_SCRIPT=str(script)))
    parts = build(
        EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted"), settings
    )
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@architect " + "What does the README say?"))[-1]
        assert reply.payload["text"] == "Checking.\n\nIt says 42."
        assert reply.payload["provider"] == "scripted"
        assert _kinds(parts, session.id).count("tool_result") == 1
    finally:
        await engine.aclose()


async def test_history_carries_earlier_turns(vendor_engine: Engine, llm_stub: LLMStub) -> None:
    engine = vendor_engine
    llm_stub.push(Reply(text=["first answer"]), Reply(text=["second answer"]))
    session = await engine.ensure_session()
    await engine.submit(session.id, "@architect " + "first question")
    await engine.submit(session.id, "/session list")  # commands are not conversation
    await engine.submit(session.id, "@architect " + "second question")
    body: Any = llm_stub.requests[-1].body
    sent = json.dumps(body["messages"])
    assert "first question" in sent and "first answer" in sent and "second question" in sent
    assert "/session list" not in sent


_ = (Drop, Stall)  # other fault kinds are covered in test_llm_faults.py
