"""Field-weighted BM25 (BM25F) over skills, or over any documents.

:class:`BM25Index` is standalone: documents are an id, an optional group (the
domain) and named text fields. Scoring is BM25F: each field's term frequency is
length-normalised against that field's average length and weighted, the sum is
saturated once with ``k1`` and multiplied by the term's IDF.

Incremental: adding or removing a document updates the postings in place.
Per-term weights depend on collection statistics (N, average field lengths),
so they are computed lazily per term at query time and the whole weight cache
is dropped on any change; between changes a query is a few dict look-ups and
one accumulation per matching posting.

:class:`SkillIndex` keeps a ``BM25Index`` in step with a
:class:`~backend.skills.registry.Registry`: names (split), description, tags,
examples' descriptions and parameter names become the fields.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from backend.skills.text import tokenize

if TYPE_CHECKING:
    from backend.skills.models import Skill
    from backend.skills.registry import Registry, RegistryChange, Resource

FIELDS = ("name", "description", "tags", "examples", "params")
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "tags": 2.0,
    "description": 1.0,
    "params": 0.7,
    "examples": 0.6,
}


@dataclass(frozen=True)
class BM25Config:
    k1: float = 1.2
    b: float = 0.75
    weights: Mapping[str, float] = DEFAULT_WEIGHTS


class BM25Index:
    """An in-memory BM25F index; deterministic order (score desc, id asc)."""

    def __init__(self, config: BM25Config | None = None) -> None:
        self.config = config or BM25Config()
        self._fields: dict[str, int] = {}  # field name -> slot
        self._postings: dict[str, dict[str, list[int]]] = {}  # term -> doc -> tf per slot
        self._lengths: dict[str, list[int]] = {}  # doc -> length per slot
        self._doc_terms: dict[str, tuple[str, ...]] = {}
        self._groups: dict[str, str | None] = {}
        self._length_sums: list[int] = []
        self._weights: dict[str, list[tuple[str, float]]] = {}  # lazy, dropped on change

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._lengths

    def _slot(self, name: str) -> int:
        slot = self._fields.get(name)
        if slot is None:
            slot = self._fields[name] = len(self._fields)
            self._length_sums.append(0)
            for lengths in self._lengths.values():
                lengths.append(0)
            for docs in self._postings.values():
                for tfs in docs.values():
                    tfs.append(0)
        return slot

    def add(
        self, doc_id: str, fields: Mapping[str, str | Iterable[str]], *, group: str | None = None
    ) -> None:
        """Index (or re-index) a document; a field is text or a list of texts."""
        if doc_id in self._lengths:
            self.remove(doc_id)
        counted: list[tuple[int, Counter[str]]] = []
        for name, value in fields.items():
            texts = [value] if isinstance(value, str) else list(value)
            terms = [t for text in texts for t in tokenize(text)]
            counted.append((self._slot(name), Counter(terms)))
        width = len(self._fields)
        lengths = [0] * width
        for slot, counts in counted:
            lengths[slot] = sum(counts.values())
            self._length_sums[slot] += lengths[slot]
            for term, tf in counts.items():
                tfs = self._postings.setdefault(term, {}).setdefault(doc_id, [0] * width)
                tfs[slot] += tf
        self._lengths[doc_id] = lengths
        self._doc_terms[doc_id] = tuple({t for _, c in counted for t in c})
        self._groups[doc_id] = group
        self._weights.clear()

    def remove(self, doc_id: str) -> bool:
        lengths = self._lengths.pop(doc_id, None)
        if lengths is None:
            return False
        for slot, length in enumerate(lengths):
            self._length_sums[slot] -= length
        for term in self._doc_terms.pop(doc_id):
            docs = self._postings[term]
            docs.pop(doc_id, None)
            if not docs:
                del self._postings[term]
        del self._groups[doc_id]
        self._weights.clear()
        return True

    def _term_weights(self, term: str) -> list[tuple[str, float]]:
        cached = self._weights.get(term)
        if cached is not None:
            return cached
        docs = self._postings.get(term)
        if not docs:
            self._weights[term] = []
            return []
        n = len(self._lengths)
        k1, b = self.config.k1, self.config.b
        idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        slots = [
            (slot, self.config.weights.get(name, 1.0), (self._length_sums[slot] / n) or 1.0)
            for name, slot in self._fields.items()
        ]
        out: list[tuple[str, float]] = []
        for doc_id, tfs in docs.items():
            lengths = self._lengths[doc_id]
            tf = 0.0
            for slot, weight, avg in slots:
                if tfs[slot]:
                    tf += weight * tfs[slot] / (1.0 - b + b * lengths[slot] / avg)
            out.append((doc_id, idf * tf / (k1 + tf)))
        self._weights[term] = out
        return out

    def search(
        self,
        query: str,
        *,
        domain: str | None = None,
        limit: int = 10,
        include: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The best ``limit`` documents for ``query`` as ``(doc_id, score)``.

        ``domain`` keeps documents of that group; ``include`` is asked about
        candidates in rank order until ``limit`` pass. An empty query returns
        the first documents by id with score 0.
        """
        if limit <= 0:
            return []
        terms = tokenize(query)
        if not terms:
            return self._first(domain, limit, include)
        scores: dict[str, float] = {}
        get = scores.get
        for term, qtf in Counter(terms).items():
            for doc_id, weight in self._term_weights(term):
                scores[doc_id] = get(doc_id, 0.0) + weight * qtf
        if not scores:
            return []
        return self._top(scores, domain, limit, include)

    def _accept(
        self, doc_id: str, domain: str | None, include: Callable[[str], bool] | None
    ) -> bool:
        if domain is not None and self._groups.get(doc_id) != domain:
            return False
        return include is None or include(doc_id)

    def _top(
        self,
        scores: dict[str, float],
        domain: str | None,
        limit: int,
        include: Callable[[str], bool] | None,
    ) -> list[tuple[str, float]]:
        want = limit * 4 + 8
        ranked = heapq.nsmallest(want, scores.items(), key=lambda kv: (-kv[1], kv[0]))
        if len(ranked) < len(scores):
            picked = [(d, s) for d, s in ranked if self._accept(d, domain, include)]
            if len(picked) >= limit:
                return picked[:limit]
            ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        picked = []
        for doc_id, score in ranked:
            if self._accept(doc_id, domain, include):
                picked.append((doc_id, score))
                if len(picked) == limit:
                    break
        return picked

    def _first(
        self, domain: str | None, limit: int, include: Callable[[str], bool] | None
    ) -> list[tuple[str, float]]:
        picked: list[tuple[str, float]] = []
        for doc_id in sorted(self._lengths):
            if self._accept(doc_id, domain, include):
                picked.append((doc_id, 0.0))
                if len(picked) == limit:
                    break
        return picked


def skill_fields(skill: Skill) -> dict[str, list[str]]:
    params = list(skill.params.model_fields)
    return {
        "name": [skill.op],
        "description": [skill.description, skill.summary],
        "tags": list(skill.tags),
        "examples": [e.description for e in skill.examples],
        "params": params,
    }


def resource_fields(resource: Resource) -> dict[str, list[str]]:
    return {
        "name": [resource.uri, resource.name],
        "description": [resource.description],
        "tags": list(resource.tags),
    }


class SkillIndex:
    """A BM25 index that follows a registry's ops and resources as they change."""

    def __init__(self, registry: Registry, config: BM25Config | None = None) -> None:
        self.index = BM25Index(config)
        for skill in registry.list():
            self.index.add(skill.op, skill_fields(skill), group=skill.domain)
        for resource in registry.resources():
            self.index.add(resource.uri, resource_fields(resource), group=resource.domain)
        registry.subscribe(self._on_change)

    def _on_change(self, change: RegistryChange) -> None:
        if change.removed:
            self.index.remove(change.key)
        elif change.skill is not None:
            self.index.add(change.key, skill_fields(change.skill), group=change.skill.domain)
        elif change.resource is not None:
            resource = change.resource
            self.index.add(change.key, resource_fields(resource), group=resource.domain)

    def search(
        self,
        query: str,
        *,
        domain: str | None = None,
        limit: int = 10,
        include: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        return self.index.search(query, domain=domain, limit=limit, include=include)
