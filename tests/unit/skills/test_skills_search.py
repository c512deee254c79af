"""Tokenising, stemming and the BM25F index behind skill search."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from backend.skills.search.bm25 import BM25Config, BM25Index
from backend.terms import split_identifier, stem, tokenize


def test_identifiers_split_on_case_underscores_dots_and_dashes() -> None:
    assert split_identifier("readFile") == ["read", "file"]
    assert split_identifier("HTTPServer") == ["http", "server"]
    assert split_identifier("engineer.file.read") == ["engineer", "file", "read"]
    assert split_identifier("get-structure_v2") == ["get", "structure", "v", "2"]


def test_tokenize_drops_stop_words_stems_and_adds_compounds() -> None:
    terms = tokenize("Searching the files for read_file")
    assert "the" not in terms and "for" not in terms
    assert terms[:2] == ["search", "file"]
    assert "readfil" in terms  # the joined compound, stemmed
    assert tokenize("librarian.code.search") == ["librarian", "code", "search"]


@pytest.mark.parametrize(
    ("words", "root"),
    [
        (("search", "searches", "searching", "searched"), "search"),
        (("file", "files"), "file"),
        (("edit", "edits", "editing", "edited"), "edit"),
        (("run", "runs", "running"), "run"),
        (("dependency", "dependencies"), "depend"),
        (("test", "tests", "testing"), "test"),
    ],
)
def test_stemmer_conflates_inflections(words: tuple[str, ...], root: str) -> None:
    assert {stem(w) for w in words} == {root}


PLAIN = BM25Config(fallback_weight=0.0, feedback_docs=0)  # BM25F alone, no expansion


def _index() -> BM25Index:
    index = BM25Index()
    index.add(
        "fs.read", {"name": ["fs.read"], "description": ["Read a file from disk"]}, group="fs"
    )
    index.add("fs.write", {"name": ["fs.write"], "description": ["Write a file"]}, group="fs")
    index.add(
        "git.commit", {"name": ["git.commit"], "description": ["Record changes"]}, group="git"
    )
    index.add("net.fetch", {"name": ["net.fetch"], "description": ["Download a web page"]})
    return index


def test_ranking_domain_include_and_empty_query() -> None:
    index = _index()
    assert index.search("read file")[0][0] == "fs.read"
    assert [d for d, _ in index.search("file", domain="git")] == []
    assert index.search("file", include=lambda d: d != "fs.read")[0][0] == "fs.write"
    assert index.search("") == [(d, 0.0) for d in sorted(index._lengths)]
    assert index.search("zzz unknown") == []
    assert index.search("file", limit=0) == []


def test_name_weight_beats_description_and_weights_are_tunable() -> None:
    index = BM25Index()
    index.add("a", {"name": ["deploy"], "description": ["ship it"]})
    index.add("b", {"name": ["ship"], "description": ["deploy the build"]})
    assert index.search("deploy")[0][0] == "a"
    flipped = BM25Index(BM25Config(weights={"name": 0.1, "description": 5.0}))
    flipped.add("a", {"name": ["deploy"], "description": ["ship it"]})
    flipped.add("b", {"name": ["ship"], "description": ["deploy the build"]})
    assert flipped.search("deploy")[0][0] == "b"


def test_incremental_add_remove_and_reindex() -> None:
    index = _index()
    assert index.search("commit")[0][0] == "git.commit"
    assert index.remove("git.commit") and "git.commit" not in index
    assert index.search("commit") == []
    assert not index.remove("git.commit")
    index.add("git.commit", {"name": ["git.commit"], "description": ["Record changes"]})
    index.add("git.commit", {"name": ["git.commit"], "description": ["Snapshot the tree"]})
    assert index.search("record") == []  # re-adding replaced the old text
    assert index.search("snapshot")[0][0] == "git.commit"
    index.add("x", {"brand_new_field": ["zebra"]})  # a field first seen late
    assert index.search("zebra")[0][0] == "x"
    assert index.search("read file")[0][0] == "fs.read"


def test_ties_break_by_id_deterministically() -> None:
    index = BM25Index()
    for name in ("c", "a", "b"):
        index.add(name, {"name": ["same words"]})
    assert [d for d, _ in index.search("same words")] == ["a", "b", "c"]


def test_pruned_search_matches_brute_force() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)]
    zipf = [1 / (i + 1) for i in range(400)]
    index = BM25Index(PLAIN)  # expansion would change the query; pruning is tested bare
    for i in range(600):
        text = " ".join(rng.choices(vocab, weights=zipf, k=20))
        index.add(f"d{i:03}", {"description": [text]}, group=f"g{i % 4}")
    for n in range(300):
        query = " ".join(rng.choices(vocab, weights=zipf, k=rng.randint(1, 5)))
        keep = (lambda d: int(d[1:]) % 3 != 0) if n % 2 else None
        got = index.search(query, limit=5, include=keep)
        scores: dict[str, float] = {}
        for term, qtf in Counter(tokenize(query)).items():
            for doc, weight in index._term_weights(term).items():
                scores[doc] = scores.get(doc, 0.0) + weight * qtf
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        expected = [kv for kv in ranked if keep is None or keep(kv[0])][:5]
        assert [round(s, 9) for _, s in got] == [round(s, 9) for _, s in expected]


def _weather_index(config: BM25Config | None = None) -> BM25Index:
    index = BM25Index(config)
    index.add("health.records", {"name": ["health.records"], "description": ["Medical files"]})
    index.add("coin.prices", {"name": ["coin.prices"], "description": ["Cryptocurrency data"]})
    index.add("file.read", {"name": ["file.read"], "description": ["Read a file"]})
    index.add("file.system", {"name": ["filesystem.mount"], "description": ["Mount disks"]})
    return index


def test_an_unknown_query_word_falls_back_to_indexed_words_sharing_its_prefix() -> None:
    index = _weather_index()
    # Neither "healthcare" nor "crypto" is indexed; "health" and "cryptocurr" are.
    assert index.search("healthcare plans")[0][0] == "health.records"
    assert index.search("crypto")[0][0] == "coin.prices"
    # A word the index knows is not widened: "file" does not reach "filesystem".
    no_feedback = _weather_index(BM25Config(feedback_docs=0))
    assert [d for d, _ in no_feedback.search("file")] == ["file.read", "health.records"]
    # Too short to guess from (under 4 characters), or switched off: nothing.
    assert index.search("hea") == []
    assert _weather_index(BM25Config(fallback_weight=0.0)).search("healthcare") == []


def test_fallback_follows_index_changes() -> None:
    index = _weather_index()
    assert index.search("healthcare")[0][0] == "health.records"
    index.remove("health.records")
    assert index.search("healthcare") == []
    index.add("care.plan", {"name": ["healthcare.plan"], "description": ["Insurance"]})
    assert index.search("healthcare")[0][0] == "care.plan"  # now a known word


def _feedback_index(config: BM25Config | None = None) -> BM25Index:
    index = BM25Index(config)
    index.add("astro.horoscope", {"name": ["astro.horoscope"], "description": [
        "Daily horoscope readings from zodiac signs and astrology charts"]})  # fmt: skip
    index.add("astro.birth_chart", {"name": ["astro.birth_chart"], "description": [
        "Astrology birth charts by zodiac sign"]})  # fmt: skip
    index.add("weather.daily", {"name": ["weather.daily"], "description": ["Daily forecast"]})
    index.add("news.daily", {"name": ["news.daily"], "description": ["Daily headlines"]})
    return index


def test_feedback_brings_in_a_tool_whose_text_lacks_the_query_word() -> None:
    # "horoscope" occurs only in the first tool; feedback from it adds "zodiac" and
    # "astrology", so the birth chart tool (no "horoscope") is found as well.
    plain = [d for d, _ in _feedback_index(PLAIN).search("my horoscope")]
    assert plain == ["astro.horoscope"]
    found = [d for d, _ in _feedback_index().search("my horoscope")]
    assert found[:2] == ["astro.horoscope", "astro.birth_chart"]
    assert "weather.daily" not in found[:2] and "news.daily" not in found[:2]


def test_feedback_respects_domain_and_include() -> None:
    index = _feedback_index()
    kept = index.search("my horoscope", include=lambda d: d != "astro.horoscope")
    # The excluded best match lends no terms: only accepted hits are used for feedback.
    assert kept == []
