"""The Archivalist's intent-aware cache: keys by topic, and each intent's invalidation rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backend.knowledge.chronicle.history_cache import (
    DEFAULT_VISIBILITY,
    HistoryCache,
    HistoryIntent,
    cache_key,
    parse_intent,
    visibility,
)
from backend.knowledge.chronicle.models import ChronicleQuery
from tests.support.clocks import FakeWall

H, A, OUT, S, R = (
    HistoryIntent.HISTORICAL,
    HistoryIntent.ACTIVITY,
    HistoryIntent.OUTCOME,
    HistoryIntent.SIMILAR,
    HistoryIntent.RESUME,
)


@pytest.fixture
def clock() -> FakeWall:
    return FakeWall(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))


@pytest.fixture
def cache(clock: FakeWall) -> HistoryCache:
    return HistoryCache(clock)


def key(intent: HistoryIntent, text: str, session: str = "s1", scope: str | None = None) -> str:
    return cache_key(intent, session_id=session, subject=None, text=text, time_scope=scope)


def test_rewordings_of_one_question_share_a_key() -> None:
    a = key(H, "How did we handle the auth migration?")
    b = key(H, "auth migration: what did we decide before")
    assert a == b
    assert key(H, "auth migration", scope="yesterday") != a  # the time range is part of it
    assert cache_key(H, session_id="s1", subject="auth_migration", text="x") == a


@pytest.mark.parametrize("intent", list(HistoryIntent))
def test_every_key_holds_the_session_and_what_it_may_see(intent: HistoryIntent) -> None:
    # An answer may quote a session-private entry: another session must never share it.
    mine = key(intent, "auth migration", session="s1")
    assert key(intent, "auth migration", session="s2") != mine
    everything = visibility(ChronicleQuery(cross_session=True))
    wider = cache_key(intent, session_id="s1", subject=None, text="auth migration", sees=everything)
    assert wider != mine
    assert DEFAULT_VISIBILITY == visibility(ChronicleQuery()) == "own+promoted"
    assert visibility(ChronicleQuery(current_only=True, promoted_only=True)) == (
        "own/promoted-only"
    )


def test_similar_never_matches_another_sessions_answer(cache: HistoryCache) -> None:
    text = "timeout error in the websocket client"
    about = ["timeout", "error", "websocket", "client"]
    cache.put(S, key(S, text, session="s1"), "s1's answer", session_id="s1", about=about)
    near = "websocket client timeout errors"
    assert cache.get(S, key(S, near, session="s2"), text=near) is None
    assert cache.get(S, key(S, near, session="s1"), text=near) == "s1's answer"


def test_general_and_unknown_intents_are_cached_as_historical() -> None:
    assert parse_intent("GENERAL") is H
    assert parse_intent(None) is H
    assert parse_intent("resume") is R


def test_historical_lives_until_its_ttl(cache: HistoryCache, clock: FakeWall) -> None:
    k = key(H, "auth migration")
    cache.put(H, k, "answer", session_id="s1", about=["auth", "migration"])
    clock.advance(minutes=44)
    assert cache.get(H, k) == "answer"
    clock.advance(minutes=2)
    assert cache.get(H, k) is None
    stats = cache.stats()["HISTORICAL"]
    assert (stats["hits"], stats["misses"], stats["expirations"]) == (1, 1, 1)


def test_new_session_activity_does_not_touch_history(cache: HistoryCache) -> None:
    k = key(H, "auth migration")
    cache.put(H, k, "answer", session_id="s1", about=["auth", "migration"])
    cache.note_activity("s1")
    assert cache.get(H, k) == "answer"


def test_an_entry_on_the_topic_drops_historical_and_similar(cache: HistoryCache) -> None:
    cache.put(H, key(H, "auth migration"), "a", session_id="s1", about=["auth", "migration"])
    cache.put(S, key(S, "auth migration"), "b", session_id="s1", about=["auth", "migration"])
    cache.put(H, key(H, "cache layer"), "c", session_id="s1", about=["cache", "layer"])
    dropped = cache.note_entry("s2", "Decided: the authentication migration runs in two steps")
    assert dropped == 2
    assert cache.get(H, key(H, "cache layer")) == "c"
    assert cache.stats()["HISTORICAL"]["invalidations"] == 1
    assert cache.stats()["SIMILAR"]["invalidations"] == 1


def test_activity_is_dropped_by_new_activity_in_a_session_it_drew_on(
    cache: HistoryCache,
) -> None:
    cache.put(A, key(A, "files"), "mine", session_id="s1", sessions=["s1"])
    cache.put(A, key(A, "files", "s3"), "all", session_id="s3", sessions=None)
    cache.note_activity("s2")  # neither drew only on s1, "all" drew on every session
    assert cache.peek(A, key(A, "files")) is not None
    assert cache.peek(A, key(A, "files", "s3")) is None
    cache.note_activity("s1")
    assert cache.get(A, key(A, "files")) is None
    assert cache.stats()["ACTIVITY"]["invalidations"] == 2


def test_activity_ttl_is_five_minutes(cache: HistoryCache, clock: FakeWall) -> None:
    cache.put(A, "k", "v", session_id="s1", sessions=["s1"])
    clock.advance(minutes=4, seconds=59)
    assert cache.get(A, "k") == "v"
    clock.advance(seconds=2)
    assert cache.get(A, "k") is None


def test_resume_is_dropped_when_the_session_state_moves(
    cache: HistoryCache, clock: FakeWall
) -> None:
    cache.put(R, key(R, "where", "s1"), "there", session_id="s1", sessions=["s1"])
    cache.put(R, key(R, "where", "s2"), "elsewhere", session_id="s2", sessions=["s2"])
    before = cache.state_version("s1")
    cache.note_activity("s1")
    assert cache.state_version("s1") == before + 1
    assert cache.get(R, key(R, "where", "s1")) is None
    assert cache.get(R, key(R, "where", "s2")) == "elsewhere"
    clock.advance(seconds=91)
    assert cache.get(R, key(R, "where", "s2")) is None  # 90 s TTL


def test_resume_put_before_a_version_change_is_stale(cache: HistoryCache) -> None:
    # Written directly (no eager drop ran): the version check at read time catches it.
    cache.put(R, "s1|", "old", session_id="s1")
    cache._versions["s1"] = 7
    assert cache.get(R, "s1|") is None
    assert cache.stats()["RESUME"]["invalidations"] == 1


def test_outcome_is_dropped_when_its_result_is_updated(cache: HistoryCache) -> None:
    cache.put(OUT, key(OUT, "database fix"), "ran", session_id="s1", about=["database", "fix"])
    cache.put(OUT, key(OUT, "login page"), "ok", session_id="s1", about=["login", "page"])
    assert cache.note_outcome("database_fix") == 1
    assert cache.get(OUT, key(OUT, "database fix")) is None
    assert cache.get(OUT, key(OUT, "login page")) == "ok"
    # An outcome-carrying chronicle entry on the subject does the same.
    assert cache.note_entry("s1", "tests for the login page pass", outcome=True) == 1


def test_outcome_of_running_work_expires_sooner(cache: HistoryCache, clock: FakeWall) -> None:
    cache.put(OUT, "running", "still going", session_id="s1", complete=False)
    cache.put(OUT, "done", "finished", session_id="s1", complete=True)
    clock.advance(minutes=3)
    assert cache.get(OUT, "running") is None
    assert cache.get(OUT, "done") == "finished"
    clock.advance(minutes=28)
    assert cache.get(OUT, "done") is None


def test_similar_matches_close_rewordings_only(cache: HistoryCache) -> None:
    k = key(S, "timeout error in the websocket client")
    cache.put(
        S, k, "seen before", session_id="s1", about=["timeout", "error", "websocket", "client"]
    )
    near = "websocket client timeout errors"
    assert cache.get(S, key(S, near), text=near) == "seen before"
    far = "websocket server crash"
    assert cache.get(S, key(S, far), text=far) is None
    stats = cache.stats()["SIMILAR"]
    assert (stats["hits"], stats["misses"], stats["hit_rate"]) == (1, 1, 0.5)


def test_clear_and_size(cache: HistoryCache) -> None:
    for intent in HistoryIntent:
        cache.put(intent, "k", "v", session_id="s1")
    assert len(cache) == 5
    assert cache.clear() == 5
    assert len(cache) == 0
    assert all(s["entries"] == 0 for s in cache.stats().values())


def test_oldest_entry_goes_first_when_full(clock: FakeWall) -> None:
    cache = HistoryCache(clock, max_entries=2)
    for n in range(3):
        cache.put(H, f"k{n}", n, session_id="s1")
    assert cache.peek(H, "k0") is None
    assert cache.get(H, "k2") == 2
