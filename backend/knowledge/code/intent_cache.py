"""The Librarian's intent-aware query cache.

Answers are cached by what was asked about, not by the words used, so "where is
the Engine class" and "find Engine" share one entry. Each intent keeps its own
key and invalidation rule (the seed's table):

=========  ======================  ==============================================
intent     key                     invalidated when
=========  ======================  ==============================================
LOCATE     entity                  a file in the result changes, or a changed file
                                   defines (or defined) the entity; no TTL
PATTERN    concept                 60 min TTL, or files are added to or removed
                                   from a directory the answer drew on
EXPLAIN    subject                 a file in the result changes, or 30 min TTL
GENERAL    normalised query        15 min TTL, or a file in the result changes
=========  ======================  ==============================================

Two rules apply to every intent on top of the table, because an answer can go
stale through a file it never mentioned: an entry is dropped when a changed
file now holds one of the words it searched for or defines one of the names it
looked up (an edit that adds the subject), and an empty answer ("nothing
found") is dropped on any content change at all, since it cannot say which
file would have to change for something to be found. GENERAL also drops on a
change to its files (the seed gives it a TTL only), because a cached answer
quoting a file that has since changed is stale, and Sylk's caches are never
stale. An answer that listed a directory (``listed``) is dropped when a file is
added to or removed from anywhere below it, whatever its intent.

An entry's value is whatever the caller stores: the index's evidence, or the
Librarian model's answer (which carries that evidence too). ``accept`` lets a
reader skip values it cannot use without counting them as hits.
"""

from __future__ import annotations

import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from backend.terms import stem


class Intent(StrEnum):
    LOCATE = "LOCATE"
    PATTERN = "PATTERN"
    EXPLAIN = "EXPLAIN"
    GENERAL = "GENERAL"


TTL_S: dict[Intent, float | None] = {
    Intent.LOCATE: None,
    Intent.PATTERN: 60 * 60.0,
    Intent.EXPLAIN: 30 * 60.0,
    Intent.GENERAL: 15 * 60.0,
}
MAX_ENTRIES = 2048  # per intent; the oldest entry goes first
_STOP_WORDS = (
    "a an the is are was were be to of in on for and or how what where which who why does do "
    "did can could should would we our my me i you it this that there please show tell find "
    "about with from"
)
_STOP = frozenset(_STOP_WORDS.split())


def entity_key(name: str) -> str:
    """``SessionManager``, ``session_manager`` and ``session manager`` share a key."""
    return re.sub(r"[\W_]+", "", name).lower()


# Words that say "how we do X" without naming X: a concept is keyed by the X alone.
_GENERIC_WORDS = (
    "handling handle handled approach strategy strategies pattern patterns convention "
    "conventions way ways style practice practices usage use used work works working "
    "code codebase here"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())
_ALIASES = {
    "config": "configuration",
    "auth": "authentication",
    "db": "database",
    "err": "error",
    "errs": "errors",
    "env": "environment",
    "deps": "dependencies",
}


def concept_key(text: str) -> str:
    """``error_handling``, ``handling errors`` and ``errors`` share a key (stemmed words)."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    content = [w for w in words if w not in _STOP and w not in _GENERIC] or words
    return " ".join(sorted({stem(_ALIASES.get(w, w)) for w in content}))


# Words that ask for an explanation without saying of what: "explain the ledger" and
# "how does the ledger class work" ask the same question.
_ASKING_WORDS = (
    "explain explained explanation describe description tell mean meaning purpose detail "
    "details overview summary summarise summarize class function method module file"
)
_ASKING = frozenset(_ASKING_WORDS.split())


def focus_words(text: str) -> frozenset[str]:
    """What a question is about, as stemmed words, without the words every question
    has; empty when it names nothing (it refers to the conversation: "explain it")."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    kept = {w for w in words if w not in _STOP and w not in _GENERIC and w not in _ASKING}
    return frozenset(stem(_ALIASES.get(w, w)) for w in kept)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of two keys' words (a lexical stand-in for the seed's embeddings)."""
    left, right = set(a.split()), set(b.split())
    return len(left & right) / len(left | right) if left and right else 0.0


def query_key(text: str) -> str:
    """A query reduced to its stemmed content words, sorted: order and filler don't matter."""
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}
    return " ".join(sorted({stem(_ALIASES.get(w, w)) for w in words}))


@dataclass
class CacheEntry:
    intent: Intent
    key: str
    value: Any
    files: frozenset[str]  # workspace-relative paths the answer drew on
    names: frozenset[str]  # entity keys whose definitions the answer depends on
    created_at: float
    terms: frozenset[str] = frozenset()  # words it searched the text for
    empty: bool = False  # nothing was found
    listed: frozenset[str] = frozenset()  # directories whose file lists it showed
    hits: int = 0

    @property
    def dirs(self) -> frozenset[str]:
        return frozenset(posixpath.dirname(f) for f in self.files)


@dataclass
class IntentStats:
    hits: int = 0
    misses: int = 0
    invalidations: int = 0
    expirations: int = 0
    entries: int = 0

    @property
    def hit_rate(self) -> float:
        asked = self.hits + self.misses
        return self.hits / asked if asked else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "invalidations": self.invalidations,
            "expirations": self.expirations,
            "entries": self.entries,
            "hit_rate": round(self.hit_rate, 4),
        }


@dataclass(frozen=True)
class Change:
    """What a batch of file changes did, as the cache needs to know it."""

    paths: frozenset[str]
    added_or_removed: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()  # entity keys defined in the changed files, before or after
    words: frozenset[str] = frozenset()  # search words of the changed files' new text
    everything: bool = False  # a bulk change: drop every entry


@dataclass
class _Store:
    entries: dict[str, CacheEntry] = field(default_factory=dict)
    stats: IntentStats = field(default_factory=IntentStats)


Listener = Callable[[Intent, str], None]
Accept = Callable[[Any], bool]


class IntentCache:
    """Thread-safe: the index updates it from a worker thread while queries read it."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        ttl: dict[Intent, float | None] | None = None,
    ) -> None:
        self._clock = clock
        self._ttl = {**TTL_S, **(ttl or {})}
        self._stores = {intent: _Store() for intent in Intent}
        self._lock = threading.Lock()
        self._on_invalidate: list[Listener] = []

    def on_invalidate(self, listener: Listener) -> None:
        """Call ``listener(intent, key)`` whenever an entry is dropped for a change."""
        self._on_invalidate.append(listener)

    def get(
        self, intent: Intent, key: str, *, accept: Accept | None = None, count: bool = True
    ) -> Any | None:
        """The value cached under ``key``, if ``accept`` (when given) takes it; otherwise
        None, counted as a miss. ``count=False`` reads without touching the figures (the
        caller counts with :meth:`note` once it knows whether the value served)."""
        with self._lock:
            store = self._stores[intent]
            entry = store.entries.get(key)
            ttl = self._ttl[intent]
            if entry is not None and ttl is not None and self._clock() - entry.created_at > ttl:
                del store.entries[key]
                store.stats.expirations += 1
                entry = None
            if entry is not None and accept is not None and not accept(entry.value):
                entry = None  # e.g. index evidence where a model answer is wanted
            if entry is None:
                if count:
                    store.stats.misses += 1
                return None
            if count:
                entry.hits += 1
                store.stats.hits += 1
            return entry.value

    def get_similar(
        self,
        intent: Intent,
        key: str,
        threshold: float,
        *,
        accept: Accept | None = None,
        count: bool = True,
    ) -> Any | None:
        """The value of an exact key, else of the most similar key at or above ``threshold``
        (GENERAL questions: the seed matches them by similarity, not by exact key)."""
        with self._lock:
            entries = self._stores[intent].entries
            usable = [k for k, e in entries.items() if accept is None or accept(e.value)]
            best = max(usable, key=lambda k: similarity(k, key), default=None)
            if best is not None and best != key and similarity(best, key) >= threshold:
                key = best
        return self.get(intent, key, accept=accept, count=count)

    def note(self, intent: Intent, *, hit: bool) -> None:
        """Count a lookup made with ``count=False``, once the caller knows how it went."""
        with self._lock:
            stats = self._stores[intent].stats
            if hit:
                stats.hits += 1
            else:
                stats.misses += 1

    def put(
        self,
        intent: Intent,
        key: str,
        value: Any,
        *,
        files: Iterable[str] = (),
        names: Iterable[str] = (),
        terms: Iterable[str] = (),
        empty: bool = False,
        listed: Iterable[str] = (),
    ) -> None:
        """Cache ``value``: ``files`` it quotes, entity ``names`` it looked up, search
        ``terms`` it looked for, whether it is ``empty`` (nothing found), and the
        directories whose contents it ``listed`` ("" is the workspace root)."""
        entry = CacheEntry(
            intent,
            key,
            value,
            frozenset(files),
            frozenset(names),
            self._clock(),
            terms=frozenset(terms),
            empty=empty,
            listed=frozenset(listed),
        )
        with self._lock:
            entries = self._stores[intent].entries
            entries.pop(key, None)
            entries[key] = entry
            while len(entries) > MAX_ENTRIES:
                entries.pop(next(iter(entries)))

    def peek(self, intent: Intent, key: str) -> CacheEntry | None:
        """The entry without counting a hit or a miss (tests and benchmarks)."""
        with self._lock:
            return self._stores[intent].entries.get(key)

    def apply(self, change: Change) -> int:
        """Drop every entry ``change`` makes stale; returns how many."""
        dropped: list[tuple[Intent, str]] = []
        with self._lock:
            for intent, store in self._stores.items():
                for key, entry in list(store.entries.items()):
                    if change.everything or self._stale(entry, change):
                        del store.entries[key]
                        store.stats.invalidations += 1
                        dropped.append((intent, key))
        for intent, key in dropped:
            for listener in self._on_invalidate:
                listener(intent, key)
        return len(dropped)

    @staticmethod
    def _stale(entry: CacheEntry, change: Change) -> bool:
        if entry.files & change.paths or (entry.empty and change.paths):
            return True
        if entry.names & change.names or entry.terms & change.words:
            return True
        if entry.listed and any(_below(p, entry.listed) for p in change.added_or_removed):
            return True
        if entry.intent is Intent.PATTERN and change.added_or_removed:
            touched = {posixpath.dirname(p) for p in change.added_or_removed}
            return bool(touched & entry.dirs) or not entry.files
        return False

    def clear(self) -> int:
        return self.apply(Change(frozenset(), everything=True))

    def stats(self) -> dict[str, dict[str, float | int]]:
        with self._lock:
            out = {}
            for intent, store in self._stores.items():
                store.stats.entries = len(store.entries)
                out[intent.value] = store.stats.as_dict()
            return out

    def __len__(self) -> int:
        with self._lock:
            return sum(len(s.entries) for s in self._stores.values())


def _below(path: str, dirs: frozenset[str]) -> bool:
    """Whether ``path`` is somewhere under one of ``dirs`` ("" and "." are the root)."""
    parent = posixpath.dirname(path)
    while True:
        if parent in dirs or (not parent and "." in dirs):
            return True
        if not parent:
            return False
        parent = posixpath.dirname(parent)
