"""The Librarian's intent cache: keys that survive rephrasing, TTLs, similarity for GENERAL."""

from __future__ import annotations

from backend.knowledge.code.intent_cache import (
    Change,
    Intent,
    IntentCache,
    concept_key,
    entity_key,
    query_key,
)


def test_keys_ignore_spelling_and_filler() -> None:
    assert entity_key("SessionManager") == entity_key("session_manager") == "sessionmanager"
    assert concept_key("error_handling") == concept_key("handling errors") == concept_key("error")
    assert concept_key("retries") == concept_key("retry")
    assert concept_key("config") == concept_key("configuration")
    assert query_key("how many Python files are there") == query_key("python files: how many")


def test_general_reuses_a_similar_question_only() -> None:
    cache = IntentCache()
    cache.put(Intent.GENERAL, query_key("list the python test files"), "answer")
    assert cache.get_similar(Intent.GENERAL, query_key("list python test files please"), 0.6)
    assert cache.get_similar(Intent.GENERAL, query_key("list the rust files"), 0.6) is None
    assert cache.stats()["GENERAL"]["hits"] == 1


def test_ttls_and_invalidation_rules() -> None:
    now = [0.0]
    cache = IntentCache(lambda: now[0])
    cache.put(Intent.LOCATE, "engine", "a", files=["backend/engine.py"], names=["engine"])
    cache.put(Intent.PATTERN, "error", "b", files=["backend/errors.py"])
    cache.put(Intent.GENERAL, "file python", "c", files=["x.py"])
    now[0] = 10**6  # LOCATE has no TTL; the others expire
    assert cache.get(Intent.LOCATE, "engine") == "a"
    assert cache.get(Intent.PATTERN, "error") is None
    assert cache.get(Intent.GENERAL, "file python") is None
    cache.put(Intent.PATTERN, "error", "b", files=["backend/errors.py"])
    # A new file in a directory the pattern drew on is a structural change.
    assert cache.apply(Change(frozenset({"backend/new.py"}), frozenset({"backend/new.py"}))) == 1
    # A file that now defines the entity drops the LOCATE entry even if it was not in the result.
    assert cache.apply(Change(frozenset({"lib/other.py"}), names=frozenset({"engine"}))) == 1
    assert len(cache) == 0
    assert cache.stats()["LOCATE"]["invalidations"] == 1


def test_an_entry_drops_when_a_changed_file_mentions_or_defines_its_subject() -> None:
    cache = IntentCache()
    cache.put(Intent.EXPLAIN, "ledger", "e", files=["a.py"], names=["ledger"], terms=["ledger"])
    cache.put(Intent.PATTERN, "retri", "p", files=["lib/net.py"], terms=["retry", "backoff"])
    cache.put(Intent.GENERAL, "stripe zebra", "g", files=["z.py"], terms=["stripe", "zebra"])
    # A change elsewhere that neither mentions nor defines any of them keeps all three.
    assert cache.apply(Change(frozenset({"b.py"}), words=frozenset({"unrelated"}))) == 0
    assert cache.apply(Change(frozenset({"b.py"}), names=frozenset({"ledger"}))) == 1
    assert cache.apply(Change(frozenset({"c/d.py"}), words=frozenset({"backoff", "x"}))) == 1
    assert cache.apply(Change(frozenset({"e.py"}), words=frozenset({"zebra"}))) == 1
    assert len(cache) == 0


def test_an_empty_answer_drops_on_any_content_change() -> None:
    cache = IntentCache()
    for intent in Intent:
        cache.put(intent, "nothing", "no match", empty=True)
    cache.put(Intent.LOCATE, "engine", "found", files=["engine.py"], names=["engine"])
    assert cache.apply(Change(frozenset({"docs/notes.md"}))) == len(Intent)
    assert cache.get(Intent.LOCATE, "engine") == "found"
