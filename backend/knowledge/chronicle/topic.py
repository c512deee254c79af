"""The topic of a history question, and how much of it a record mentions.

A full-text hit may carry only part of a topic of several words: :class:`Topic`
ranks those below the hits that carry all of it and leaves out one that carries
only a weak word ("error"), comparing words by a crude stem (:func:`same_word`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from backend.knowledge.chronicle.models import Entry, FileOp
from backend.knowledge.chronicle.text import stem, words

T = TypeVar("T")
# Heads too common to stand for a topic alone: "timeout error" is about the timeout.
WEAK = frozenset(
    stem(w)
    for w in (
        *("error", "errors", "issue", "issues", "problem", "problems", "bug", "bugs"),
        *("failure", "failures", "exception", "exceptions", "warning", "warnings", "crash"),
    )
)


class Topic:
    """The topic's words, and how much of it a record mentions.

    The full-text search asks for every word first and falls back to any one word,
    so a hit may carry only part of the topic: those are ranked below the hits
    that carry all of it, and a hit with only a weak word ("error") is left out.
    """

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms
        self.label = " ".join(terms)
        strong = [t for t in terms if stem(t) not in WEAK]
        self.strong = frozenset(strong or terms)

    def mentions(self, text: str) -> frozenset[str]:
        found = set(words(text))
        return frozenset(t for t in self.terms if any(same_word(stem(t), w) for w in found))

    def whole(self, text: str) -> bool:
        # One word: the search matched it, with its own stemming; trust that.
        return len(self.terms) < 2 or len(self.mentions(text)) == len(self.terms)

    def rank(self, items: list[T], text_of: Callable[[T], str]) -> list[T]:
        if len(self.terms) < 2:
            return items
        scored = [(self.mentions(text_of(i)), i) for i in items]
        kept = [(m, i) for m, i in scored if m & self.strong]
        kept.sort(key=lambda mi: (len(mi[0] & self.strong), len(mi[0])), reverse=True)
        return [i for _, i in kept]


def same_word(root: str, word: str) -> bool:
    """``word`` is a form of the word whose crude stem is ``root``: "caching" ~ "cached",
    "policies" ~ "policy" (the index's own Porter stemmer agrees on these)."""
    if word.startswith(root):
        return True
    if len(word) < len(root) - 1 or len(root) < 4:
        return False
    shared = next(
        (i for i, (a, b) in enumerate(zip(root, word, strict=False)) if a != b),
        min(len(root), len(word)),
    )
    return shared >= min(len(root), len(word)) - 1


def entry_text(e: Entry) -> str:
    return f"{e.title or ''} {e.content}"


def file_text(f: FileOp) -> str:
    return f"{f.path} {f.summary or ''}"
