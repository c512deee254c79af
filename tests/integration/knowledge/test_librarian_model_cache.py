"""The Librarian model's answers are cached per intent and dropped when what they drew on changes.

A real engine, archive, code index and file watcher; the model is the local
HTTP stub, so every model call is a request the stub records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.knowledge.code.evidence import ModelAnswer
from backend.knowledge.code.intent_cache import Intent, entity_key
from backend.knowledge.code.live import CodeKnowledge
from backend.messages import Message, MessageType
from backend.skills.hooks.registry import HookKind, ToolCallData
from tests.stubs.llm_script import Reply, Status, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.support.polling import until

KEY = "sk-librarian-0123456789abcdef"
QUESTION = "@librarian explain how the Ledger works"
FIRST = "The Ledger appends entries and balances them when it closes."
SECOND = "The Ledger now rounds every entry before it balances."
READ_LEDGER = StubToolCall("execute", {"op": "librarian.file.read", "args": {"path": "ledger.py"}})


@dataclass
class Rig:
    engine: Engine
    parts: EngineParts
    stub: LLMStub
    knowledge: CodeKnowledge
    session_id: str
    workspace: Path

    async def ask(self, text: str = QUESTION) -> Message[dict[str, Any]]:
        return (await self.engine.submit(self.session_id, text))[-1]

    def answer_turn(self, text: str) -> None:
        """The model's next turn: read ledger.py, then answer ``text``."""
        self.stub.push(Reply(tool_calls=[READ_LEDGER]), Reply(text=[text]))

    def entry(self) -> Any:
        return self.knowledge.cache.peek(Intent.EXPLAIN, entity_key("ledger"))

    async def edit(self, rel: str, text: str) -> None:
        """Write a file and wait until the watcher's batch has been applied."""
        before = self.knowledge.batches_applied
        (self.workspace / rel).write_text(text)
        await until(lambda: self.knowledge.batches_applied > before, what=f"the edit of {rel}")


@pytest.fixture
async def rig(llm_stub: LLMStub, data_dir: Path, workspace: Path) -> AsyncIterator[Rig]:
    (workspace / "ledger.py").write_text(
        "class Ledger:\n    def close(self) -> None:\n        self.balance()\n"
    )
    (workspace / "notes.py").write_text("TODO = ['buy milk']\n")
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url}
    parts = build(
        EngineConfig(data_dir=data_dir, workspace=workspace), load_config(None, env=engine_env(env))
    )
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        knowledge = await engine.start_indexing(session.id)
        await knowledge.wait_ready()
        yield Rig(engine, parts, llm_stub, knowledge, session.id, workspace)
    finally:
        await engine.aclose()


async def test_an_explain_question_asked_twice_costs_one_model_turn(rig: Rig) -> None:
    rig.answer_turn(FIRST)
    first = await rig.ask()
    assert first.payload["text"] == FIRST and first.payload.get("answered_from") is None
    calls = rig.stub.count()
    assert calls == 2  # the tool call and the answer

    again = await rig.ask("@librarian how does the ledger work")  # other words, same question
    assert rig.stub.count() == calls  # no model request at all
    assert again.type is MessageType.AGENT_REPLY and again.source == "librarian"
    model = rig.parts.turns.choice("librarian").model
    assert again.payload["answered_from"] == "cache" and again.payload["model"] == model
    assert again.payload["text"].startswith(FIRST)
    assert "Cached answer from " in again.payload["text"]
    assert f"(model {model}); the files it drew on have not changed" in again.payload["text"]
    entry = rig.entry()
    assert isinstance(entry.value, ModelAnswer)
    assert {"ledger.py"} <= entry.files and "ledger" in entry.names
    stats = rig.parts.knowledge.cache_stats(rig.workspace)["librarian"]["EXPLAIN"]
    assert stats["hits"] == 1 and stats["misses"] == 1  # /status counts the model's answers


async def test_editing_a_file_the_turn_read_makes_the_next_ask_go_to_the_model(rig: Rig) -> None:
    rig.answer_turn(FIRST)
    await rig.ask()
    await rig.edit("ledger.py", "class Ledger:\n    def close(self) -> None:\n        round(1)\n")
    assert rig.entry() is None  # the watcher's batch dropped it

    rig.answer_turn(SECOND)
    fresh = await rig.ask()
    assert fresh.payload["text"] == SECOND and fresh.payload.get("answered_from") is None
    assert rig.stub.count() == 4
    assert isinstance(rig.entry().value, ModelAnswer)  # and the new answer is cached


async def test_an_edit_the_watcher_has_not_reported_yet_is_never_answered_stale(rig: Rig) -> None:
    rig.answer_turn(FIRST)
    await rig.ask()
    # Asked again at once: the watcher is still debouncing the edit, but the cached
    # answer's files are hashed again before it is reused.
    (rig.workspace / "ledger.py").write_text("class Ledger:\n    pass\n")
    rig.answer_turn(SECOND)
    fresh = await rig.ask()
    assert fresh.payload["text"] == SECOND
    assert rig.stub.count() == 4


async def test_an_unrelated_edit_keeps_the_cached_answer(rig: Rig) -> None:
    rig.answer_turn(FIRST)
    await rig.ask()
    await rig.edit("notes.py", "TODO = ['buy bread']\n")
    await rig.edit("tasks.py", "DONE: list[str] = []\n")  # a new file, same directory
    again = await rig.ask()
    assert again.payload["answered_from"] == "cache"
    assert rig.stub.count() == 2


async def test_a_turn_that_fails_is_not_cached(rig: Rig) -> None:
    rig.stub.push(Status(401, message="bad key"))
    failed = await rig.ask()
    assert failed.type is MessageType.SYSTEM_NOTICE and "could not answer" in failed.payload["text"]
    assert rig.entry() is None

    rig.answer_turn(FIRST)
    answered = await rig.ask()
    assert answered.payload["text"] == FIRST and rig.stub.count() == 3


async def test_a_change_batch_during_the_turn_means_the_answer_is_not_cached(rig: Rig) -> None:
    landed: list[int] = []

    async def edit_meanwhile(data: ToolCallData) -> None:
        # While the turn is between its tool call and its answer, an unrelated file
        # changes and the watcher's batch is applied.
        if not landed:
            await rig.edit("notes.py", "TODO = ['call the bank']\n")
            landed.append(rig.knowledge.batches_applied)

    rig.parts.gateway.hooks.add(HookKind.POST_TOOL, edit_meanwhile, agents=["librarian"])
    rig.answer_turn(FIRST)
    first = await rig.ask()
    assert first.payload["text"] == FIRST and landed
    assert rig.entry() is None  # it would depend on ledger.py only, but it overlapped a batch

    rig.answer_turn(SECOND)
    second = await rig.ask()
    assert second.payload["text"] == SECOND and rig.stub.count() == 4
    assert isinstance(rig.entry().value, ModelAnswer)  # a quiet turn is cached again


async def test_a_different_question_on_the_same_subject_is_not_served_the_cached_answer(
    rig: Rig,
) -> None:
    rig.answer_turn(FIRST)
    await rig.ask()
    rig.answer_turn(SECOND)
    other = await rig.ask("@librarian explain how the Ledger rounds entries")
    assert other.payload["text"] == SECOND and rig.stub.count() == 4


async def test_a_pattern_answer_drops_when_a_file_is_added_beside_those_it_read(rig: Rig) -> None:
    (rig.workspace / "errors").mkdir()
    await rig.edit("errors/base.py", "class AppError(Exception):\n    pass\n")
    read = StubToolCall(
        "execute", {"op": "librarian.file.read", "args": {"path": "errors/base.py"}}
    )
    rig.stub.push(Reply(tool_calls=[read]), Reply(text=["Errors derive from AppError."]))
    question = "@librarian what is our error handling strategy"
    await rig.ask(question)
    assert (await rig.ask(question)).payload["answered_from"] == "cache"

    await rig.edit("errors/extra.py", "VALUE = 1\n")  # structural: a new file in its directory
    rig.stub.push(Reply(text=["Errors derive from AppError; see errors/extra.py too."]))
    fresh = await rig.ask(question)
    assert fresh.payload.get("answered_from") is None and rig.stub.count() == 3
