"""Two sessions asking the Archivalist the same question: one's private entries and
cached answers never reach the other (real SQLite archive, real engine)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest

from backend.archive.store import Archive
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.knowledge.chronicle.answer import answer_history
from backend.knowledge.chronicle.answer_lines import FOUND, NOTHING
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.sessions.models import Session

A, B = "sess-a-0001", "sess-b-0002"
QUESTION = "what did we decide about the ledger"
PRIVATE = "Ledger storage uses SQLite in WAL mode"


@pytest.fixture
def chronicle(tmp_path: Path) -> Iterator[Chronicle]:
    archive = Archive(tmp_path / "data")
    archive.save_sessions(
        [
            Session(id=A, name="ledger-work", workspace=str(tmp_path)),
            Session(id=B, name="other-work", workspace=str(tmp_path)),
        ]
    )
    yield Chronicle(archive, tz=UTC)
    archive.close()


async def ask(chronicle: Chronicle, session_id: str, intent: str = "HISTORICAL") -> str:
    return await answer_history(
        chronicle, text=QUESTION, intent=intent, subject="ledger", time_scope=None,
        session_id=session_id,
    )  # fmt: skip


@pytest.mark.parametrize("intent", ["HISTORICAL", "SIMILAR", "OUTCOME"])
async def test_a_private_decision_and_its_cached_answer_stay_in_their_session(
    chronicle: Chronicle, intent: str
) -> None:
    await chronicle.store(A, "decision", PRIVATE, title="ledger store")
    mine = await ask(chronicle, A, intent)
    assert mine.startswith(f"**{FOUND}**") and PRIVATE in mine
    assert await ask(chronicle, A, intent) == mine  # cached for A

    theirs = await ask(chronicle, B, intent)
    assert PRIVATE not in theirs and theirs.startswith(f"**{NOTHING}**")
    stats = chronicle.cache.stats()[intent]
    assert (stats["hits"], stats["misses"]) == (1, 2)  # B's answer was computed, not A's


async def test_promotion_shares_the_decision_and_drops_the_other_sessions_answer(
    chronicle: Chronicle,
) -> None:
    entry = await chronicle.store(A, "decision", PRIVATE, title="ledger store")
    await ask(chronicle, A)
    assert PRIVATE not in await ask(chronicle, B)
    await chronicle.promote(entry.id)
    shared = await ask(chronicle, B)
    assert PRIVATE in shared and "promoted · session *ledger-work*" in shared


async def test_through_the_engine_session_b_never_sees_a_private_decision(
    engine_config: EngineConfig,
) -> None:
    parts = build(engine_config.model_copy(update={"provider": "offline"}))
    engine = Engine.from_parts(parts)
    try:
        a = await engine.ensure_session()
        b = await engine.create_session("other", activate=False)
        await parts.knowledge.chronicle.store(a.id, "decision", PRIVATE, title="ledger store")
        answer_a = (await engine.submit(a.id, QUESTION))[-1].payload["text"]
        assert PRIVATE in answer_a
        await engine.switch_session(b.id)
        answer_b = (await engine.submit(b.id, QUESTION))[-1].payload["text"]
        assert PRIVATE not in answer_b
        assert "this session" not in answer_b  # not A's answer, labelled for A
    finally:
        await engine.aclose()
