"""The Guide's routing cache: normalised keys, LRU bounds, TTL on a fake clock, statistics."""

from __future__ import annotations

import pytest

from backend.guide.routing.cache import RouteCache
from backend.guide.routing.decision import Classification, RouteDecision, Target
from tests.support.clocks import FakeClock


def found(target: Target = Target.LIBRARIAN, confidence: float = 0.9) -> Classification:
    return Classification(target=target, intent="LOCATE", subject="auth", confidence=confidence)


def test_miss_then_hit() -> None:
    cache = RouteCache(8)
    assert cache.get("where is auth") is None
    value = found()
    assert cache.put("where is auth", value)
    assert cache.get("where is auth") is value
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.size, stats.capacity) == (1, 1, 1, 8)
    assert stats.hit_rate == 0.5


@pytest.mark.parametrize(
    "variant",
    [
        "Where is auth?",
        "where is auth",
        "  WHERE   is\tauth ?! ",
        "where is auth...",
        "where is auth\n",
    ],
)
def test_keys_are_normalised(variant: str) -> None:
    cache = RouteCache(8)
    cache.put("where is auth", found())
    assert cache.get(variant) is not None


def test_normalise_keeps_inner_punctuation() -> None:
    assert RouteCache.normalise("  Where is  ModelClient.run? ") == "where is modelclient.run"
    assert RouteCache.normalise("what's new?!") == "what's new"
    assert RouteCache.normalise("where is auth") != RouteCache.normalise("where is auth2")


def test_least_recently_used_is_evicted() -> None:
    cache = RouteCache(2)
    cache.put("a", found(Target.ACADEMIC))
    cache.put("b", found(Target.TESTER))
    assert cache.get("a") is not None  # "b" is now the least recently used
    cache.put("c", found(Target.INSPECTOR))
    assert cache.get("b") is None
    assert cache.get("a") is not None
    assert cache.get("c") is not None
    stats = cache.stats()
    assert (stats.evictions, stats.size) == (1, 2)


def test_putting_again_refreshes_without_evicting() -> None:
    cache = RouteCache(2)
    cache.put("a", found(Target.ACADEMIC))
    cache.put("b", found(Target.TESTER))
    cache.put("a", found(Target.ARCHITECT))
    cache.put("c", found(Target.INSPECTOR))  # evicts "b", the least recent
    hit = cache.get("a")
    assert hit is not None and hit.target is Target.ARCHITECT
    assert cache.get("b") is None
    assert cache.stats().evictions == 1


def test_entries_expire_after_the_ttl() -> None:
    clock = FakeClock()
    cache = RouteCache(8, ttl_s=60, clock=clock)
    cache.put("a", found())
    clock.now += 59.9
    assert cache.get("a") is not None
    clock.now += 0.1
    assert cache.get("a") is None
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.expirations, stats.size) == (1, 1, 1, 0)


def test_the_ttl_runs_from_the_last_put_not_the_last_get() -> None:
    clock = FakeClock()
    cache = RouteCache(8, ttl_s=10, clock=clock)
    cache.put("a", found())
    clock.now += 8
    assert cache.get("a") is not None
    clock.now += 8
    assert cache.get("a") is None
    cache.put("a", found())
    clock.now += 8
    assert cache.get("a") is not None


def test_no_ttl_means_no_expiry() -> None:
    clock = FakeClock()
    cache = RouteCache(8, clock=clock)
    cache.put("a", found())
    clock.now += 10**9
    assert cache.get("a") is not None


def test_low_confidence_is_not_stored() -> None:
    cache = RouteCache(8, min_confidence=0.75)
    assert not cache.put("hmm", found(confidence=0.3))
    assert cache.get("hmm") is None
    assert cache.put("where is auth", found(confidence=0.8))
    assert len(cache) == 1


def test_global_by_default_so_sessions_share_entries() -> None:
    cache = RouteCache(8)
    cache.put("where is auth", found(), session_id="s1")
    assert cache.get("where is auth", session_id="s2") is not None
    assert cache.get("where is auth") is not None


def test_per_session_scope_keeps_sessions_apart() -> None:
    cache = RouteCache(8, per_session=True)
    cache.put("where is auth", found(Target.LIBRARIAN), session_id="s1")
    assert cache.get("where is auth", session_id="s2") is None
    cache.put("where is auth", found(Target.ACADEMIC), session_id="s2")
    one, two = (
        cache.get("where is auth", session_id="s1"),
        cache.get("where is auth", session_id="s2"),
    )
    assert one is not None and one.target is Target.LIBRARIAN
    assert two is not None and two.target is Target.ACADEMIC
    with pytest.raises(ValueError, match="session_id"):
        cache.get("where is auth")


def test_route_decisions_are_stored_as_they_are() -> None:
    cache = RouteCache(8)
    decision = RouteDecision(target=Target.TESTER, confidence=0.9, tier="model", text="run it")
    cache.put("run it", decision)
    hit = cache.get("run it")
    assert isinstance(hit, RouteDecision) and hit.tier == "model"


def test_invalidate_and_clear() -> None:
    cache = RouteCache(8)
    cache.put("a", found())
    cache.put("b", found())
    assert cache.invalidate("A?")
    assert not cache.invalidate("a")
    cache.get("b")
    cache.clear()
    assert len(cache) == 0
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.evictions, stats.expirations) == (0, 0, 0, 0)


@pytest.mark.parametrize(("kwargs"), [{"capacity": 0}, {"ttl_s": 0}, {"ttl_s": -1.0}])
def test_bad_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RouteCache(**kwargs)  # type: ignore[arg-type]


def test_stats_are_a_frozen_model() -> None:
    stats = RouteCache(4).stats()
    assert stats.hit_rate == 0.0
    with pytest.raises(ValueError):
        stats.hits = 3  # type: ignore[misc]
