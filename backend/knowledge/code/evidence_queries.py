"""The index's evidence for each kind of question the Librarian answers.

LOCATE finds definitions (the asker's own spelling first, then the subject),
falling back to text matches; EXPLAIN adds the definitions' source and other
mentions; PATTERN ranks places that show a concept's code words; GENERAL is a
full-text search for the question's key words. ``ready`` says, once the evidence
is gathered, whether the index's first build had finished (else the evidence
may be incomplete).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backend.knowledge.code.evidence import Evidence, Snippet
from backend.knowledge.code.index import CodeIndex
from backend.knowledge.code.index_queries import SymbolHit, TextHit
from backend.knowledge.code.intent_cache import Intent, entity_key, query_key
from backend.knowledge.code.patterns import concept_terms

CONTEXT_LINES = 30
Ready = Callable[[], bool]


def locate_evidence(index: CodeIndex, entity: str, text: str, ready: Ready) -> Evidence:
    # The user's own spelling first ("SessionManager"), then the normalised subject.
    spelled = [
        w for w in re.findall(r"[A-Za-z_][\w.]*", text) if entity_key(w) == entity_key(entity)
    ]
    hits: list[SymbolHit] = []
    for name in [*spelled, entity]:
        hits = index.locate(name.split(".")[-1], limit=20)
        if hits:
            break
    snippets = [] if hits else text_snippets(index, entity.replace("_", " "), 8)
    return Evidence(
        Intent.LOCATE,
        entity,
        definitions=hits,
        snippets=snippets,
        indexed_files=index.file_count(),
        complete=ready(),
    )


def explain_evidence(index: CodeIndex, subject: str, ready: Ready) -> Evidence:
    hits = index.locate(subject, limit=5)
    blocks = [
        Snippet(h.path, h.line, "\n".join(index.lines(h.path, h.line, _end(h)))) for h in hits[:3]
    ]
    mentions = [s for s in text_snippets(index, subject.replace("_", " "), 6)
                if (s.path, s.line) not in {(b.path, b.line) for b in blocks}]  # fmt: skip
    return Evidence(
        Intent.EXPLAIN,
        subject,
        definitions=hits,
        snippets=blocks + mentions,
        indexed_files=index.file_count(),
        complete=ready(),
    )


def pattern_evidence(index: CodeIndex, concept: str, ready: Ready) -> Evidence:
    snippets: list[Snippet] = []
    seen: set[str] = set()
    for term in concept_terms(concept):
        for s in text_snippets(index, term, 10):
            if s.path not in seen:
                seen.add(s.path)
                snippets.append(s)
    return Evidence(
        Intent.PATTERN,
        concept,
        snippets=snippets[:12],
        indexed_files=index.file_count(),
        complete=ready(),
    )


def general_evidence(index: CodeIndex, query: str, ready: Ready) -> Evidence:
    words = query_key(query)
    return Evidence(
        Intent.GENERAL,
        query,
        snippets=text_snippets(index, words, 10) if words else [],
        indexed_files=index.file_count(),
        complete=ready(),
    )


def text_snippets(index: CodeIndex, text: str, limit: int) -> list[Snippet]:
    hits: list[TextHit] = index.search(text, limit=limit)
    if not hits and len(text.split()) > 1:  # every word is too strict: try the rarest ones
        hits = [h for w in sorted(text.split(), key=len, reverse=True)[:2]
                for h in index.search(w, limit=limit // 2)]  # fmt: skip
    return [Snippet(h.path, h.line, h.snippet) for h in hits[:limit]]


def _end(hit: SymbolHit) -> int:
    end = hit.end_line or hit.line + CONTEXT_LINES
    return min(end, hit.line + CONTEXT_LINES)
