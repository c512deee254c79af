"""Whole turns through the Engine on the scripted provider, crossing each role's thresholds.

The script reports growing usage; the window of the "scripted" model is set to 100k
tokens in ``[context.windows]``, so 26k tokens is 26%. The checkpoints land in the
chronicle under the role's category in the seed's shape, and the model the turn after a
compaction sees the task verbatim, the summary and the latest exchanges, nothing older.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.config.context import ContextSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.knowledge.chronicle.models import Category, ChronicleQuery, Entry
from backend.llm.provider import Provider
from backend.llm.types import ChatRequest, StreamEvent
from backend.memory.keeper import PROMPT_HEADER, SUMMARY_HEADER
from backend.memory.summaries import CHECKPOINT_MARK
from backend.messages import MessageType
from tests.stubs.llm_script import Reply
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env

WINDOW = 100_000
LIBRARIAN_SUMMARY = {
    "directory_structure": "app/ holds the code",
    "key_paths": ["app/main.py"],
    "patterns": ["small modules"],
    "new_discoveries": ["main.py starts the app"],
    "invented_field": "dropped: not in the seed's shape",
}


@dataclass
class Recording:
    """The real scripted provider, with every request it was sent kept for the test."""

    inner: Provider
    name: str = "scripted"
    requests: list[ChatRequest] = field(default_factory=list)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        async for event in self.inner.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()


def _usage(tokens: int) -> dict[str, int]:
    return {"input_tokens": tokens, "output_tokens": 50}


async def _engine(
    data_dir: Path, workspace: Path, script: dict[str, Any]
) -> tuple[Engine, EngineParts, Recording]:
    path = workspace.parent / "script.json"
    path.write_text(json.dumps(script))
    settings = load_config(None, env=engine_env(SYLK_SCRIPT=str(path)))
    settings = settings.model_copy(
        update={"context": ContextSettings(windows={"scripted": WINDOW})}
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted")
    parts = build(config, settings)
    client = parts.turns.client("scripted")
    recording = Recording(client.provider)
    client.provider = recording
    return Engine.from_parts(parts), parts, recording


async def _entries(parts: EngineParts, session_id: str, category: Category) -> list[Entry]:
    query = ChronicleQuery(categories=[category], current_only=True)
    found = await parts.knowledge.chronicle.query(session_id, query)
    return sorted(found, key=lambda e: e.data["checkpoint_index"])


async def _ask(engine: Engine, session_id: str, text: str) -> dict[str, Any]:
    reply = (await engine.submit(session_id, text))[-1]
    assert reply.type is MessageType.AGENT_REPLY, reply.payload
    return dict(reply.payload)


async def test_the_librarian_checkpoints_at_25_50_75_and_compacts_at_75(
    data_dir: Path, workspace: Path
) -> None:
    answers = [
        {"text": f"Answer {n}: app/main.py holds part {n}.", "usage": _usage(tokens)}
        for n, tokens in enumerate([26_000, 51_000, 76_000, 20_000, 22_000], start=1)
    ]
    summary = {"text": json.dumps(LIBRARIAN_SUMMARY), "usage": _usage(3_000)}
    script = {
        "turns": answers,
        "threads": {"summary": {"match": CHECKPOINT_MARK, "turns": [summary] * 3}},
    }
    engine, parts, recording = await _engine(data_dir, workspace, script)
    try:
        session = await engine.ensure_session()
        task = "@librarian Task: map every module of the app and what each one does, please."
        await _ask(engine, session.id, task)
        for n in range(2, 6):
            await _ask(engine, session.id, f"@librarian Question {n}: what else do you see now?")

        await parts.turns.context.settle()  # checkpoints are written beside the turns
        entries = await _entries(parts, session.id, Category.LIBRARIAN_CHECKPOINT)
        assert [e.data["checkpoint_index"] for e in entries] == [1, 2, 3]
        usages = [e.data["context_usage"] for e in entries]
        assert 0.25 <= usages[0] < 0.5 <= usages[1] < 0.75 <= usages[2]
        assert [e.data["compacted"] for e in entries] == [False, False, True]
        first = entries[0]
        assert first.agent == "librarian"
        assert first.data["session_id"] == session.id and first.data["timestamp"]
        assert first.data["written_by"] == "model" and not first.data["estimated_usage"]
        assert first.data["key_paths"] == ["app/main.py"]
        assert "invented_field" not in first.data
        for seed_field in ("code_style", "tooling", "conventions", "testing_strategy"):
            assert seed_field in first.data  # every field of the seed's CodebaseSummary

        # The turn after the compaction: the task verbatim, the summary, the last two
        # exchanges and the question; the older turns are gone.
        turn = [r for r in recording.requests if CHECKPOINT_MARK not in r.messages[-1].text]
        assert len(turn) == 5
        seen = turn[3].messages
        opening = seen[0].text
        assert opening.startswith(PROMPT_HEADER) and task.removeprefix("@librarian ") in opening
        assert SUMMARY_HEADER in opening and "main.py starts the app" in opening
        said = [m.text for m in seen]
        assert not any("Answer 1:" in t for t in said)  # compacted away
        assert any("Answer 3:" in t for t in said) and "Question 4" in said[-1]
        # After the compaction, the thresholds count again from the smaller context.
        assert parts.turns.context.get(session.id, "librarian").use is not None
        status = engine.status_text(session.id)
        assert "librarian" in status and "of 100k" in status
    finally:
        await engine.aclose()


async def test_a_held_summary_call_is_an_extract_and_costs_nothing(
    data_dir: Path, workspace: Path
) -> None:
    answers = [{"text": "Answer 1: app/main.py starts it.", "usage": _usage(30_000)}]
    engine, parts, recording = await _engine(data_dir, workspace, {"turns": answers})
    checks: list[str | None] = []

    async def budget(session_id: str, pipeline: str | None) -> str | None:
        """The budget is reached after the first call: every later one is held."""
        checks.append(pipeline)
        return "the session's token budget is reached" if len(checks) > 1 else None

    parts.turns.before_model_call = budget
    try:
        session = await engine.ensure_session()
        await _ask(engine, session.id, "@librarian Task: map the app's modules, please.")
        held = (await engine.submit(session.id, "@librarian Question 2: anything else?"))[-1]
        assert "budget is reached" in str(held.payload)
        await parts.turns.context.settle()
        entries = await _entries(parts, session.id, Category.LIBRARIAN_CHECKPOINT)
        assert len(entries) == 1 and entries[0].data["written_by"] == "extract"
        assert entries[0].data["key_paths"] == ["app/main.py"]
        assert len(checks) == 3 and len(recording.requests) == 1  # the summary never called
        assert engine.usage(session.id).calls == 1
    finally:
        await engine.aclose()


async def test_the_guides_routing_calls_show_as_its_context_in_status(
    data_dir: Path, workspace: Path
) -> None:
    route = {"target": "librarian", "intent": "GENERAL", "subject": "widgets", "confidence": 0.9}
    script = {
        "turns": [
            {"tool_calls": [{"name": "route", "arguments": route}], "usage": _usage(24_000)},
            {"text": "Widgets live in app/widgets.py.", "usage": _usage(1_000)},
        ]
    }
    engine, _, recording = await _engine(data_dir, workspace, script)
    try:
        session = await engine.ensure_session()
        await engine.submit(session.id, "widgets?")  # the patterns are unsure: the model tier
        assert recording.requests[0].tool_choice == "route"
        assert "guide 24% of 100k" in engine.status_text(session.id)
    finally:
        await engine.aclose()


async def test_with_no_usage_reported_the_context_is_an_estimate(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    """A local server that sends no usage chunk: the client counts, marked estimated."""
    for text in ("First answer.", "Second answer."):
        llm_stub.push([Reply(text=[text], include_usage=False)])
    env = {"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": llm_stub.openai_base_url}
    settings = load_config(None, env=engine_env(env))
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="openai")
    parts = build(config, settings)
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        await _ask(engine, session.id, "@librarian Task: list the modules.")
        await _ask(engine, session.id, "@librarian And the tests?")
        use = parts.turns.context.get(session.id, "librarian").use
        assert use is not None and use.estimated and 0 < use.tokens < 10_000
        assert use.window == 400_000  # the gpt-5 family's default window
        assert "librarian ~0% of 400k" in engine.status_text(session.id)
    finally:
        await engine.aclose()
