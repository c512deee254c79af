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

:class:`~backend.skills.search.skill_index.SkillIndex` keeps one in step with a registry.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from backend.skills.search.expansion import VocabularyFallback, feedback_terms
from backend.skills.search.fields import LEAD_WORDS
from backend.skills.search.phrases import query_phrases
from backend.terms import tokenize, tokenize_query

FIELDS = ("name", "description", "details", "tags", "examples", "params")
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "name": 4.0,
    "tags": 2.0,
    "description": 1.0,
    "details": 0.4,  # a description past its first ``lead_words`` words (fields.py)
    "params": 0.7,
    "examples": 0.6,
}


@dataclass(frozen=True)
class BM25Config:
    # Tuned on MetaTool (see benchmarks/RESULTS.md, "Tool retrieval"): tool descriptions
    # are short and repeat their key words, so term frequency counts more (k1) and
    # length normalisation less (b) than BM25's prose defaults of 1.2 and 0.75.
    k1: float = 2.0
    b: float = 0.2
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # Query expansion (backend/skills/search_expansion.py), chosen on the even-numbered
    # MetaTool queries only: an unknown query word falls back to indexed words sharing a
    # prefix of at least ``fallback_min`` characters at ``fallback_weight`` (0 turns it
    # off); the best ``feedback_docs`` hits lend their ``feedback_terms`` strongest terms
    # at up to ``feedback_weight`` of a query word (0 docs turns feedback off), and only
    # when the first pass is confident: its best hit leads the second by at least
    # ``feedback_confidence`` of its score (0: always). Chosen on the tuning corpora
    # (MetaTool's even half, stdlib, google-a; RESULTS.md "Generalisation across
    # corpora"): feedback from an uncertain first hit pulled in that hit's neighbours on
    # the API catalogs; gated, ten terms beat five on all three and cost little time.
    fallback_weight: float = 0.5
    fallback_min: int = 4
    feedback_docs: int = 1
    feedback_terms: int = 10
    feedback_weight: float = 0.3
    feedback_confidence: float = 0.15
    feedback_floor: float = 0.2  # feedback terms under this share of the best one's weight
    # A description's first ``lead_words`` words are its "description" field, the rest its
    # "details" (weighted less, see fields.py); 0 keeps the whole text in "description".
    lead_words: int = LEAD_WORDS
    # Two adjacent query words that are two adjacent words of an op's name count as one
    # more query term at this weight (phrases.py; 0 turns it off).
    phrase_weight: float = 0.5


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
        self._weights: dict[str, dict[str, float]] = {}  # lazy, dropped on change
        self._max: dict[str, float] = {}  # term -> its largest weight (MaxScore bound)
        self._fallback = VocabularyFallback(self._postings.keys, self.config.fallback_min)

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
        self._changed()

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
        self._changed()
        return True

    def _changed(self) -> None:
        self._weights.clear()
        self._max.clear()
        self._fallback.clear()

    def _term_weights(self, term: str) -> dict[str, float]:
        cached = self._weights.get(term)
        if cached is not None:
            return cached
        docs = self._postings.get(term)
        if not docs:
            self._weights[term] = {}
            self._max[term] = 0.0
            return {}
        n = len(self._lengths)
        k1, b = self.config.k1, self.config.b
        idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        slots = [
            (slot, self.config.weights.get(name, 1.0), (self._length_sums[slot] / n) or 1.0)
            for name, slot in self._fields.items()
        ]
        out: dict[str, float] = {}
        for doc_id, tfs in docs.items():
            lengths = self._lengths[doc_id]
            tf = 0.0
            for slot, weight, avg in slots:
                if tfs[slot]:
                    tf += weight * tfs[slot] / (1.0 - b + b * lengths[slot] / avg)
            out[doc_id] = idf * tf / (k1 + tf)
        self._weights[term] = out
        self._max[term] = max(out.values())
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
        terms = tokenize_query(query)
        accepted: dict[str, bool] = {}

        def accept(doc_id: str) -> bool:
            verdict = accepted.get(doc_id)
            if verdict is None:
                verdict = accepted[doc_id] = self._accept(doc_id, domain, include)
            return verdict

        if not terms:
            return self._first(limit, accept)
        config = self.config
        weighted = self._fallback.expand(terms, self._postings.__contains__, config.fallback_weight)
        if config.phrase_weight > 0:
            for phrase in query_phrases(query):
                if phrase in self._postings and phrase not in weighted:
                    weighted[phrase] = config.phrase_weight
        scores = self._score(weighted, limit, accept) if weighted else {}
        if scores and config.feedback_docs > 0 and config.feedback_weight > 0:
            scores = self._feedback(weighted, scores, limit, accept)
        return self._top(scores, limit, accept) if scores else []

    def coverage(self, query: str, doc_id: str) -> float:
        """The share of the query's terms that occur in ``doc_id`` (0.0 for an unknown doc).

        Near 1.0 when a query restates a tool's own words, which the hybrid search reads
        as a sign to trust the lexical ranking over the semantic one.
        """
        terms = set(tokenize_query(query))
        doc = self._doc_terms.get(doc_id)
        if not terms or doc is None:
            return 0.0
        return len(terms.intersection(doc)) / len(terms)

    def _feedback(
        self,
        weighted: dict[str, float],
        scores: dict[str, float],
        limit: int,
        accept: Callable[[str], bool],
    ) -> dict[str, float]:
        """Score again with the best hits' strongest terms added (see expansion.py)."""
        config = self.config
        best = self._top(scores, max(config.feedback_docs, 2), accept)
        if len(best) > 1 and best[1][1] > best[0][1] * (1.0 - config.feedback_confidence):
            return scores  # no clear best hit: its terms would pull in its neighbours
        best = best[: config.feedback_docs]
        extra = feedback_terms(
            best,
            self._doc_terms,
            lambda term, doc_id: self._term_weights(term).get(doc_id, 0.0),
            weighted,
            config.feedback_terms,
            floor=config.feedback_floor,
        )
        if not extra:
            return scores
        # The first pass's scores are kept and only the new terms are scored on top of
        # them (with the same MaxScore pruning), so the query's own posting lists are not
        # walked twice. Documents the first pass pruned keep a partial score: they could
        # not reach its top anyway.
        added = {term: config.feedback_weight * weight for term, weight in extra}
        return self._score(added, limit, accept, start=scores)

    def _score(
        self,
        terms: Mapping[str, float],
        limit: int,
        accept: Callable[[str], bool],
        start: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """Term-at-a-time BM25 with MaxScore pruning.

        Terms are taken from the highest possible contribution down. Once the
        contributions still to come cannot lift a document not yet seen above
        the current k-th accepted score, the remaining (common, long) posting
        lists are only probed for the candidates already found.
        """
        lists = []
        for term, qtf in terms.items():
            weights = self._term_weights(term)
            if weights:
                lists.append((weights, qtf, self._max[term] * qtf))
        lists.sort(key=lambda item: -item[2])
        remaining = sum(item[2] for item in lists)
        scores: dict[str, float] = dict(start) if start else {}  # ``start``: earlier terms
        closed = False  # no new document can reach the top any more
        for weights, qtf, bound in lists:
            if not closed and scores and len(weights) > 2 * len(scores):
                theta = self._threshold(scores, limit, accept)
                if remaining < theta:
                    closed = True
                    scores = {d: v for d, v in scores.items() if v + remaining >= theta}
            remaining -= bound
            if closed:
                for doc_id in scores:
                    weight = weights.get(doc_id)
                    if weight:
                        scores[doc_id] += weight * qtf
            elif not scores:
                scores = dict(weights) if qtf == 1 else {d: w * qtf for d, w in weights.items()}
            else:
                get = scores.get
                for doc_id, weight in weights.items():
                    scores[doc_id] = get(doc_id, 0.0) + weight * qtf
        return scores

    def _threshold(
        self, scores: dict[str, float], limit: int, accept: Callable[[str], bool]
    ) -> float:
        """The k-th best accepted partial score (a lower bound of the final k-th), or 0."""
        if len(scores) < limit:
            return 0.0
        top = heapq.nlargest(limit * 4 + 8, scores, key=scores.__getitem__)
        kept = [d for d in top if accept(d)]
        return scores[kept[limit - 1]] if len(kept) >= limit else 0.0

    def _accept(
        self, doc_id: str, domain: str | None, include: Callable[[str], bool] | None
    ) -> bool:
        if domain is not None and self._groups.get(doc_id) != domain:
            return False
        return include is None or include(doc_id)

    def _top(
        self, scores: dict[str, float], limit: int, accept: Callable[[str], bool]
    ) -> list[tuple[str, float]]:
        want = limit * 4 + 8
        if len(scores) > want:
            # Score-only selection is C-fast; ties are then ordered by id within the window.
            top = heapq.nlargest(want, scores, key=scores.__getitem__)
            ranked = sorted(((d, scores[d]) for d in top), key=lambda kv: (-kv[1], kv[0]))
            picked = [(d, v) for d, v in ranked if accept(d)][:limit]
            # Exact unless a tie at the window's edge may hide a smaller id.
            if len(picked) == limit and picked[-1][1] > ranked[-1][1]:
                return picked
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        picked = []
        for doc_id, score in ranked:
            if accept(doc_id):
                picked.append((doc_id, score))
                if len(picked) == limit:
                    break
        return picked

    def _first(self, limit: int, accept: Callable[[str], bool]) -> list[tuple[str, float]]:
        picked: list[tuple[str, float]] = []
        for doc_id in sorted(self._lengths):
            if accept(doc_id):
                picked.append((doc_id, 0.0))
                if len(picked) == limit:
                    break
        return picked
