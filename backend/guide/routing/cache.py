"""The Guide's routing cache: the same request, phrased the same way, is not classified twice.

Keys are the request text normalised cheaply (lower case, whitespace collapsed,
trailing ``.``/``?``/``!`` dropped), so "Where is the auth middleware?" and
"where is  the auth middleware" share an entry. Entries are evicted least
recently used first once ``capacity`` is reached, and expire ``ttl_s``
seconds after they were stored when a TTL is set.

Scope. A routing decision is a function of the request text alone: the
pattern and model tiers see nothing else, and a session command's reference
("switch to session 2") is resolved later, against the caller's own sessions.
So by default the cache is **global**: one entry serves every session, which
raises the hit rate and leaks nothing (an entry holds only what its own text
says). ``per_session=True`` keys entries by session id as well, for a caller
that someday routes on session state; ``get``/``put`` then require
``session_id``.

Not thread-safe: the Guide uses it from its event loop only.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from backend.guide.routing.decision import Classification

_TRAILING = ".?! \t\n"


class CacheStats(BaseModel):
    model_config = ConfigDict(frozen=True)
    hits: int
    misses: int
    evictions: int  # dropped to make room (LRU)
    expirations: int  # found past their TTL
    size: int
    capacity: int

    @property
    def hit_rate(self) -> float:
        asked = self.hits + self.misses
        return self.hits / asked if asked else 0.0


class RouteCache:
    """A bounded LRU map from normalised request text to its classification.

    Stored values (a :class:`Classification` or :class:`RouteDecision`) are
    returned as they were put: treat them as read-only, and copy with
    ``model_copy(update=...)`` to re-tag a hit (e.g. ``tier="cache"``).
    """

    def __init__(
        self,
        capacity: int = 1024,
        *,
        ttl_s: float | None = None,
        per_session: bool = False,
        min_confidence: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive or None, got {ttl_s}")
        self.capacity = capacity
        self.ttl_s = ttl_s
        self.per_session = per_session
        # Decisions below this are not worth keeping (e.g. an unconfirmed pattern guess).
        self.min_confidence = min_confidence
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str], tuple[Classification, float]] = OrderedDict()
        self._hits = self._misses = self._evictions = self._expirations = 0

    @staticmethod
    def normalise(text: str) -> str:
        """The cache key for ``text``: lower case, single spaces, no trailing punctuation."""
        return " ".join(text.lower().split()).rstrip(_TRAILING)

    def get(self, text: str, *, session_id: str | None = None) -> Classification | None:
        key = self._key(text, session_id)
        entry = self._entries.get(key)
        if entry is None:
            self._misses += 1
            return None
        value, expires_at = entry
        if expires_at <= self._clock():
            del self._entries[key]
            self._expirations += 1
            self._misses += 1
            return None
        self._entries.move_to_end(key)
        self._hits += 1
        return value

    def put(self, text: str, decision: Classification, *, session_id: str | None = None) -> bool:
        """Store ``decision`` for ``text``; False when it is below ``min_confidence``."""
        if decision.confidence < self.min_confidence:
            return False
        key = self._key(text, session_id)
        expires_at = self._clock() + self.ttl_s if self.ttl_s is not None else float("inf")
        self._entries[key] = (decision, expires_at)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
            self._evictions += 1
        return True

    def invalidate(self, text: str, *, session_id: str | None = None) -> bool:
        """Forget one entry; True if there was one."""
        return self._entries.pop(self._key(text, session_id), None) is not None

    def clear(self) -> None:
        """Drop every entry and reset the statistics (like ``functools.lru_cache``)."""
        self._entries.clear()
        self._hits = self._misses = self._evictions = self._expirations = 0

    def stats(self) -> CacheStats:
        return CacheStats(
            hits=self._hits,
            misses=self._misses,
            evictions=self._evictions,
            expirations=self._expirations,
            size=len(self._entries),
            capacity=self.capacity,
        )

    def __len__(self) -> int:
        return len(self._entries)

    def _key(self, text: str, session_id: str | None) -> tuple[str, str]:
        if not self.per_session:
            return ("", self.normalise(text))
        if session_id is None:
            raise ValueError("this RouteCache is per session: pass session_id")
        return (session_id, self.normalise(text))
