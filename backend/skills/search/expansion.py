"""Query expansion for BM25: unknown-word fallback and pseudo-relevance feedback.

Two general fixes for short documents (one-line tool descriptions) meeting free-form
requests, neither of which knows anything about a particular tool set:

* **Vocabulary fallback.** A query word that no document contains cannot score, yet it
  is often a compound or a longer/shorter form of a word that is there: "healthcare"
  and "health", "repository" and "repo", "crypto" and "cryptocurrencies". Such a term
  is replaced by the indexed terms it is a prefix of, or that are a prefix of it (at
  least ``min_length`` characters), at a reduced weight shared among them. Words the
  index knows are never touched, so ordinary matches rank as before.
* **Pseudo-relevance feedback** (RM3-style, on the best ``docs`` documents): their
  highest-weighted terms are added to the query at a fraction of a query term's weight,
  so that documents like the best match move up among the rest. With one feedback
  document the first hit keeps its place and the neighbours are re-ordered.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping


class VocabularyFallback:
    """Maps a term the index lacks to indexed terms sharing a prefix with it.

    ``vocabulary`` is called when the sorted term list is needed after :meth:`clear`
    (the index calls ``clear`` on every change), so a stable index pays nothing.
    """

    def __init__(self, vocabulary: Callable[[], Iterable[str]], min_length: int = 4) -> None:
        self._vocabulary = vocabulary
        self.min_length = min_length
        self._sorted: list[str] | None = None
        self._known: frozenset[str] = frozenset()
        self._cache: dict[str, tuple[str, ...]] = {}

    def clear(self) -> None:
        self._sorted = None
        self._cache.clear()

    def _terms(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(t for t in self._vocabulary() if len(t) >= self.min_length)
            self._known = frozenset(self._sorted)
        return self._sorted

    def related(self, term: str) -> tuple[str, ...]:
        """Indexed terms that ``term`` is a prefix of, or that are a prefix of ``term``."""
        cached = self._cache.get(term)
        if cached is not None:
            return cached
        out: list[str] = []
        if len(term) >= self.min_length:
            terms = self._terms()
            # Longer forms: the sorted run of terms starting with ``term``.
            at = bisect.bisect_left(terms, term)
            while at < len(terms) and terms[at].startswith(term):
                if terms[at] != term:
                    out.append(terms[at])
                at += 1
            # Shorter forms: each proper prefix of ``term`` that is itself indexed.
            out.extend(
                term[:n] for n in range(self.min_length, len(term)) if term[:n] in self._known
            )
        found = tuple(sorted(set(out)))
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[term] = found
        return found

    def expand(
        self, terms: Iterable[str], known: Callable[[str], bool], weight: float
    ) -> dict[str, float]:
        """Query term weights: known terms count 1 each, unknown ones share ``weight``."""
        weights: dict[str, float] = {}
        for term in terms:
            if known(term):
                weights[term] = weights.get(term, 0.0) + 1.0
            elif weight > 0:
                related = self.related(term)
                for other in related:
                    weights[other] = weights.get(other, 0.0) + weight / len(related)
        return weights


def feedback_terms(
    docs: Iterable[tuple[str, float]],
    doc_terms: Mapping[str, Iterable[str]],
    term_weight: Callable[[str, str], float],
    query: Mapping[str, float],
    count: int,
    *,
    floor: float = 0.0,
) -> list[tuple[str, float]]:
    """The ``count`` terms that best describe the feedback ``docs``, weights scaled to 1.

    A term's weight is its BM25 weight in each document, averaged over the documents
    weighted by their scores (the relevance model of RM3, with BM25 in place of
    probabilities). Terms already in ``query`` are left out, and so are terms under
    ``floor`` of the best one's weight: a word most documents share ("tool", a domain's
    name) says nothing about the hit, and would only append every document that has it.
    """
    ranked = list(docs)
    total = sum(score for _, score in ranked) or 1.0
    weights: dict[str, float] = {}
    for doc_id, score in ranked:
        for term in doc_terms.get(doc_id, ()):
            if term not in query:
                weights[term] = weights.get(term, 0.0) + term_weight(term, doc_id) * score / total
    best = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:count]
    if not best or best[0][1] <= 0:
        return []
    top = best[0][1]
    return [(term, w / top) for term, w in best if w > 0 and w >= floor * top]
