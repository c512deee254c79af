"""What the Librarian's answers are made of, and how a question is cached.

:class:`Evidence` is what the index knows about a question (definitions and
ranked :class:`Snippet` matches); :class:`Lookup` is the cache key of a question
and the names and words any answer to it depends on (:func:`lookup_for`);
:class:`ModelAnswer` is the Librarian model's answer, cached under the same key
with the index's evidence for the same question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from backend.knowledge.code.index_queries import SymbolHit, search_words
from backend.knowledge.code.intent_cache import Intent, concept_key, entity_key, query_key
from backend.knowledge.code.patterns import concept_terms


@dataclass(frozen=True)
class Snippet:
    path: str
    line: int
    text: str  # one line, or a block of source lines


@dataclass(frozen=True)
class Evidence:
    """What the index knows about a question: definitions and ranked text matches."""

    intent: Intent
    subject: str
    definitions: list[SymbolHit] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)
    indexed_files: int = 0
    complete: bool = True  # False while the first build is still running
    cached: bool = False

    @property
    def files(self) -> set[str]:
        return {d.path for d in self.definitions} | {s.path for s in self.snippets}


@dataclass(frozen=True)
class Lookup:
    """How a question is cached: its intent's key, and the entity names and search
    words any answer to it depends on (a changed file defining or holding one of
    them may change the answer)."""

    intent: Intent
    key: str
    subject: str
    names: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()


def lookup_for(intent: Intent, subject: str, text: str = "") -> Lookup:
    """The cache key and dependencies for a question of ``intent`` about ``subject``
    (GENERAL questions are keyed by their ``text``), as the index's answers use them."""
    if intent in (Intent.LOCATE, Intent.EXPLAIN):
        key = entity_key(subject)
        terms = search_words(subject.replace("_", " "))
        return Lookup(intent, key, subject, frozenset([key]), frozenset(terms))
    if intent is Intent.PATTERN:
        terms = set().union(*(search_words(t) for t in concept_terms(subject)))
        return Lookup(intent, concept_key(subject), subject, terms=frozenset(terms))
    query = text or subject
    key = query_key(query)
    return Lookup(Intent.GENERAL, key, query, terms=frozenset(search_words(key)))


@dataclass(frozen=True)
class ModelAnswer:
    """The Librarian model's answer to a question, cached with the index's evidence
    for the same question (which a question answered from the index may reuse)."""

    text: str
    question: str  # as asked, to tell the same question from another on the subject
    model: str
    answered_at: datetime
    evidence: Evidence
    # Digest of each file it drew on when it was cached (None: no such file), checked
    # again before the answer is reused, in case the watcher has not reported an edit yet.
    digests: Mapping[str, str | None] = field(default_factory=dict)


def is_model_answer(value: object) -> bool:
    return isinstance(value, ModelAnswer)


def evidence_of(value: object) -> Evidence | None:
    """The index evidence a cached value holds: itself, or a model answer's."""
    if isinstance(value, ModelAnswer):
        return value.evidence
    return value if isinstance(value, Evidence) else None


def as_cached(evidence: Evidence) -> Evidence:
    return Evidence(
        evidence.intent,
        evidence.subject,
        evidence.definitions,
        evidence.snippets,
        evidence.indexed_files,
        evidence.complete,
        cached=True,
    )
