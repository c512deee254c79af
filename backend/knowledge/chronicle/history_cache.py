"""The Archivalist's intent-aware answer cache.

History questions are cached by what they ask about, not by their wording, so
"what did we decide about auth" and "auth decisions?" share one entry. Each
intent has its own key and invalidation rule (the seed's table):

==========  ===========================  ================================================
intent      key                          invalidated when
==========  ===========================  ================================================
HISTORICAL  topic (+ time scope)         TTL (45 min); history is immutable, but a new
                                         chronicle entry on the same topic drops it
ACTIVITY    session + activity + scope   new activity in a session the answer drew on,
                                         or TTL (5 min)
OUTCOME     task / workflow subject      that result is updated (an outcome entry on the
                                         subject), or TTL: 2 min while the work is still
                                         running, 30 min once it is complete
SIMILAR     topic, matched at 0.80       TTL (30 min), or a new entry on the topic
RESUME      session                      the session's state version changes (any
                                         activity in it), or TTL (90 s)
==========  ===========================  ================================================

Every key also starts with the asking session and what it may see (its own
entries plus every session's promoted ones, by default): an answer may quote a
session-private entry, so it is only ever served back to the session it was
computed for, never to another session asking the same question.

SIMILAR stands in for the seed's embedding match with word overlap: a question
whose content words have a cosine of at least 0.80 with a cached one's is the
same question. The clock is injectable so TTLs are tested without sleeping.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from backend.clock import utc_now
from backend.knowledge.chronicle.models import ChronicleQuery
from backend.knowledge.chronicle.text import stem, topic


class HistoryIntent(StrEnum):
    HISTORICAL = "HISTORICAL"
    ACTIVITY = "ACTIVITY"
    OUTCOME = "OUTCOME"
    SIMILAR = "SIMILAR"
    RESUME = "RESUME"


TTL: dict[HistoryIntent, timedelta] = {
    HistoryIntent.HISTORICAL: timedelta(minutes=45),
    HistoryIntent.ACTIVITY: timedelta(minutes=5),
    HistoryIntent.OUTCOME: timedelta(minutes=30),
    HistoryIntent.SIMILAR: timedelta(minutes=30),
    HistoryIntent.RESUME: timedelta(seconds=90),
}
PENDING_OUTCOME_TTL = timedelta(minutes=2)  # "until complete": a running task changes often
SIMILAR_THRESHOLD = 0.80
MAX_ENTRIES = 1024  # per intent; the oldest goes first


def parse_intent(value: str | None) -> HistoryIntent:
    """The cache's intent for a Guide intent; GENERAL (or none) is cached as HISTORICAL."""
    try:
        return HistoryIntent((value or "").strip().upper())
    except ValueError:
        return HistoryIntent.HISTORICAL


def visibility(query: ChronicleQuery) -> str:
    """Which sessions' entries ``query`` lets its session see, as a cache key part."""
    if query.current_only:
        seen = "own"
    elif query.cross_session:
        seen = "all"
    else:
        seen = "own+promoted"
    return f"{seen}/promoted-only" if query.promoted_only else seen


DEFAULT_VISIBILITY = visibility(ChronicleQuery())


def cache_key(
    intent: HistoryIntent,
    *,
    session_id: str,
    subject: str | None,
    text: str,
    time_scope: str | None = None,
    sees: str = DEFAULT_VISIBILITY,
) -> str:
    """What the entry is about, for whom: wording, word order and filler words don't
    change it; the asking session and what it may see (``sees``, see :func:`visibility`)
    always do."""
    viewer = f"{session_id}|{sees}"
    scope = (time_scope or "").strip().lower()
    if intent is HistoryIntent.RESUME:
        return f"{viewer}|{scope}"
    about = " ".join(sorted(topic(subject) or topic(text)))
    return f"{viewer}|{about}|{scope}"


def _frame(key: str) -> tuple[str, str]:
    """(viewer, time scope) of a topic key: what a SIMILAR match must share with it."""
    parts = key.rsplit("|", 2)
    return (parts[0], parts[2]) if len(parts) == 3 else (key, "")


def _cosine(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def _overlaps(wanted: frozenset[str], found: frozenset[str]) -> bool:
    """Every wanted word occurs in ``found`` (prefixes count: auth ~ authentication)."""
    return all(any(f.startswith(w) or w.startswith(f) for f in found) for w in wanted)


@dataclass
class Cached:
    intent: HistoryIntent
    key: str
    value: Any
    created_at: datetime
    ttl: timedelta
    session_id: str
    sessions: frozenset[str] | None  # sessions the answer drew on; None: every session
    topic: frozenset[str]
    state_version: int
    hits: int = 0


def _drew_on(entry: Cached, session_id: str) -> bool:
    return entry.sessions is None or session_id in entry.sessions


@dataclass
class IntentStats:
    hits: int = 0
    misses: int = 0
    invalidations: int = 0
    expirations: int = 0

    def as_dict(self, entries: int) -> dict[str, float | int]:
        asked = self.hits + self.misses
        return {
            "hits": self.hits,
            "misses": self.misses,
            "invalidations": self.invalidations,
            "expirations": self.expirations,
            "entries": entries,
            "hit_rate": round(self.hits / asked, 4) if asked else 0.0,
        }


@dataclass
class _Store:
    entries: dict[str, Cached] = field(default_factory=dict)
    stats: IntentStats = field(default_factory=IntentStats)


class HistoryCache:
    """Thread-safe; every change to what an answer drew on drops the answer at once."""

    def __init__(
        self,
        clock: Callable[[], datetime] = utc_now,
        ttl: Mapping[HistoryIntent, timedelta] | None = None,
        *,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self._clock = clock
        self._ttl = {**TTL, **(ttl or {})}
        self._max = max_entries
        self._stores = {intent: _Store() for intent in HistoryIntent}
        self._versions: dict[str, int] = {}
        self._lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------
    def get(self, intent: HistoryIntent, key: str, *, text: str = "") -> Any | None:
        """The cached answer, or None (a miss). SIMILAR also matches near-identical topics."""
        with self._lock:
            store = self._stores[intent]
            entry = store.entries.get(key)
            if entry is None and intent is HistoryIntent.SIMILAR and text:
                entry = self._nearest(store, topic(text), key)
            if entry is not None and self._clock() - entry.created_at > entry.ttl:
                del store.entries[entry.key]
                store.stats.expirations += 1
                entry = None
            if (
                entry is not None
                and intent is HistoryIntent.RESUME
                and self._versions.get(entry.session_id, 0) != entry.state_version
            ):  # the seed: the session's state version changed
                del store.entries[entry.key]
                store.stats.invalidations += 1
                entry = None
            if entry is None:
                store.stats.misses += 1
                return None
            entry.hits += 1
            store.stats.hits += 1
            return entry.value

    @staticmethod
    def _nearest(store: _Store, wanted: frozenset[str], key: str) -> Cached | None:
        frame = _frame(key)
        best, score = None, 0.0
        for entry in store.entries.values():
            if _frame(entry.key) != frame:  # another session's answer, or another time
                continue
            s = _cosine(wanted, entry.topic)
            if s >= SIMILAR_THRESHOLD and s > score:
                best, score = entry, s
        return best

    def peek(self, intent: HistoryIntent, key: str) -> Cached | None:
        """The entry, without counting a hit or a miss."""
        with self._lock:
            return self._stores[intent].entries.get(key)

    # -- writing -----------------------------------------------------------------------
    def put(
        self,
        intent: HistoryIntent,
        key: str,
        value: Any,
        *,
        session_id: str,
        sessions: Iterable[str] | None = None,
        about: Iterable[str] = (),
        complete: bool = True,
    ) -> None:
        """Cache ``value``. ``sessions``: the sessions it drew on (None: every one);
        ``about``: its topic words; ``complete``: for OUTCOME, whether the work is done."""
        ttl = self._ttl[intent]
        if intent is HistoryIntent.OUTCOME and not complete:
            ttl = min(ttl, PENDING_OUTCOME_TTL)
        with self._lock:
            entry = Cached(
                intent=intent,
                key=key,
                value=value,
                created_at=self._clock(),
                ttl=ttl,
                session_id=session_id,
                sessions=None if sessions is None else frozenset(sessions),
                topic=frozenset(stem(w) for w in about),
                state_version=self._versions.get(session_id, 0),
            )
            entries = self._stores[intent].entries
            entries.pop(key, None)
            entries[key] = entry
            while len(entries) > self._max:
                entries.pop(next(iter(entries)))

    # -- invalidation ------------------------------------------------------------------
    def state_version(self, session_id: str) -> int:
        with self._lock:
            return self._versions.get(session_id, 0)

    def note_activity(self, session_id: str) -> int:
        """New activity in ``session_id``: its state version moves on, and the ACTIVITY
        and RESUME answers that drew on it (and its own RESUME answers) are dropped.
        Returns how many."""
        with self._lock:
            self._versions[session_id] = self._versions.get(session_id, 0) + 1
            dropped = self._drop(HistoryIntent.ACTIVITY, lambda e: _drew_on(e, session_id))
            dropped += self._drop(
                HistoryIntent.RESUME,
                lambda e: e.session_id == session_id or _drew_on(e, session_id),
            )
            return dropped

    def note_entry(self, session_id: str, text: str, *, outcome: bool = False) -> int:
        """A chronicle entry was stored: activity in its session, and answers on its
        topic (HISTORICAL, SIMILAR, and OUTCOME for an ``outcome`` entry) are dropped."""
        found = topic(text)
        dropped = self.note_activity(session_id)
        with self._lock:
            for intent in (HistoryIntent.HISTORICAL, HistoryIntent.SIMILAR):
                dropped += self._drop(intent, lambda e: _overlaps(e.topic, found))
            if outcome:
                dropped += self._drop_outcome(found)
        return dropped

    def note_outcome(self, subject: str) -> int:
        """The result of ``subject`` (a task or workflow) was updated."""
        with self._lock:
            return self._drop_outcome(topic(subject))

    def _drop_outcome(self, found: frozenset[str]) -> int:
        return self._drop(HistoryIntent.OUTCOME, lambda e: _overlaps(e.topic, found))

    def _drop(self, intent: HistoryIntent, stale: Callable[[Cached], bool]) -> int:
        store = self._stores[intent]
        gone = [k for k, e in store.entries.items() if stale(e)]
        for key in gone:
            del store.entries[key]
        store.stats.invalidations += len(gone)
        return len(gone)

    def clear(self) -> int:
        with self._lock:
            return sum(self._drop(intent, lambda _e: True) for intent in HistoryIntent)

    def stats(self) -> dict[str, dict[str, float | int]]:
        with self._lock:
            return {
                intent.value: store.stats.as_dict(len(store.entries))
                for intent, store in self._stores.items()
            }

    def __len__(self) -> int:
        with self._lock:
            return sum(len(s.entries) for s in self._stores.values())
