"""Which questions the knowledge agents answer from their stores, with and without a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.messages import MessageType

MODEL_ANSWER = "The ledger keeps entries in insertion order and balances on close."


def _project(workspace: Path) -> None:
    (workspace / "ledger.py").write_text(
        '"""Books."""\n\n\nclass Ledger:\n    def close(self) -> None:\n        pass\n'
    )


async def test_with_a_model_locate_still_needs_none_but_explain_goes_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    _project(engine_config.workspace)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": MODEL_ANSWER}]}))
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    engine = Engine(engine_config.model_copy(update={"provider": "scripted"}))
    try:
        session = await engine.ensure_session()
        located = (await engine.submit(session.id, "where is the Ledger class defined"))[-1]
        assert located.type is MessageType.AGENT_REPLY
        assert located.payload["answered_from"] == "knowledge"
        assert "`ledger.py:4` class `Ledger`" in located.payload["text"]
        assert engine.usage(session.id).calls == 0  # no model call for a location
        explained = (await engine.submit(session.id, "explain how the Ledger works"))[-1]
        assert explained.payload.get("answered_from") is None
        assert explained.payload["text"] == MODEL_ANSWER
    finally:
        await engine.aclose()


async def test_offline_each_knowledge_agent_answers_from_its_store(
    engine_config: EngineConfig,
) -> None:
    _project(engine_config.workspace)
    parts = build(engine_config.model_copy(update={"provider": "offline"}))
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        await engine.submit(session.id, "@librarian how does the ledger close its books")
        chronicle = parts.knowledge.chronicle
        await chronicle.store(session.id, "decision", "Keep the ledger in SQLite, WAL mode")
        history = (await engine.submit(session.id, "what did we decide about the ledger"))[-1]
        assert history.source == "archivalist" and history.payload["answered_from"] == "knowledge"
        assert "Keep the ledger in SQLite" in history.payload["text"]
        practice = (
            await engine.submit(session.id, "what are the best practices for retries in python")
        )[-1]
        assert practice.source == "academic"
        assert "sylk://library/errors/retries-backoff" in practice.payload["text"]
        assert "no model used" in practice.payload["text"]
        pattern = (await engine.submit(session.id, "how do we handle errors here"))[-1]
        assert pattern.source == "librarian"
        assert "not a summary" in pattern.payload["text"]  # evidence, honestly labelled
        assert "Configure a model" in pattern.payload["text"]
    finally:
        await engine.aclose()


async def test_a_stated_decision_is_kept_and_found_but_only_in_its_session(
    engine: Engine, engine_parts: EngineParts
) -> None:
    from backend.knowledge.chronicle.models import Category, ChronicleQuery

    first = await engine.create_session("billing")
    said = await engine.submit(first.id, "decision: invoices stay in SQLite until 10k users")
    assert "Recorded (no model used)" in said[-1].payload["text"]
    await engine.submit(first.id, "we decided to retry webhooks at most 5 times")
    kept = await engine_parts.knowledge.chronicle.query(
        first.id, ChronicleQuery(categories=[Category.DECISION])
    )
    assert sorted(e.content for e in kept) == [
        "invoices stay in SQLite until 10k users",
        "we decided to retry webhooks at most 5 times",
    ]
    found = (await engine.submit(first.id, "what did we decide about invoices"))[-1]
    assert "invoices stay in SQLite until 10k users" in found.payload["text"]
    other = await engine.create_session("other")
    unseen = (await engine.submit(other.id, "what did we decide about invoices"))[-1]
    assert "10k users" not in unseen.payload["text"]


async def test_with_a_model_a_stated_decision_is_still_recorded_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": MODEL_ANSWER}]}))
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    engine = Engine(engine_config.model_copy(update={"provider": "scripted"}))
    try:
        session = await engine.ensure_session()
        kept = (await engine.submit(session.id, "decision: ledgers close at midnight UTC"))[-1]
        assert "Recorded (no model used)" in kept.payload["text"]
        assert engine.usage(session.id).calls == 0
    finally:
        await engine.aclose()
