"""Turning names and prose into search terms: identifier splitting, stop words, stemming.

``readFile``, ``read_file``, ``read-file`` and ``engineer.file.read`` all give
the terms ``read`` and ``file`` (plus the joined ``readfil`` for compound
identifiers, so a query typed as one word still matches). Terms are lower
case and stemmed with the Porter algorithm (written out below, no dependency),
so "searching", "searches" and "search" meet.
"""

from __future__ import annotations

import re
from functools import lru_cache

STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does", "for",
    "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "not",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "you", "your",
})  # fmt: skip

# Requests are phrased politely ("can you help me find..."); these words say nothing
# about which tool is wanted, so they are dropped from queries (never from documents).
QUERY_FILLER = frozenset({
    "help", "please", "want", "need", "find", "get", "give", "tell", "know", "like", "show",
    "let", "some", "any", "also", "just", "hi", "hello", "thanks", "thank", "am", "im",
})  # fmt: skip

_CHUNK = re.compile(r"[A-Za-z0-9]+")
# Dots, slashes and spaces separate words; "_" and "-" join parts of one compound.
_SEPARATORS = re.compile(r"[^A-Za-z0-9_\-]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(text: str) -> list[str]:
    """Split on anything not alphanumeric, then on camelCase and digit boundaries."""
    parts: list[str] = []
    for chunk in _CHUNK.findall(text):
        parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    return parts


def tokenize(text: str, *, compounds: bool = True) -> list[str]:
    """Stemmed, stop-word-free terms of ``text`` (an identifier or prose)."""
    terms: list[str] = []
    for chunk in _SEPARATORS.split(text):
        if not chunk:
            continue
        words = split_identifier(chunk)
        terms.extend(stem(w) for w in words if w not in STOP_WORDS)
        if compounds and len(words) > 1:
            joined = "".join(words)
            if len(joined) <= 40:
                terms.append(stem(joined))
    return terms


def tokenize_query(text: str) -> list[str]:
    """Terms of a search query: as :func:`tokenize`, less conversational filler."""
    kept = " ".join(w for w in _SEPARATORS.split(text) if w.lower() not in QUERY_FILLER)
    return tokenize(kept or text)


# -- Porter stemmer -------------------------------------------------------------------
_VOWELS = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem_: str) -> int:
    """The number of vowel-consonant sequences (Porter's m)."""
    m, i, n = 0, 0, len(stem_)
    while i < n and _consonant(stem_, i):
        i += 1
    while i < n:
        while i < n and not _consonant(stem_, i):
            i += 1
        if i >= n:
            break
        while i < n and _consonant(stem_, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem_: str) -> bool:
    return any(not _consonant(stem_, i) for i in range(len(stem_)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    if len(word) < 3:
        return False
    n = len(word)
    return (
        _consonant(word, n - 3)
        and not _consonant(word, n - 2)
        and _consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _replace(word: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    for suffix, repl in rules:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            return base + repl if _measure(base) > min_m else word
    return word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _step1(word: str) -> str:
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = word[: -len(suffix)]
            if word.endswith(("at", "bl", "iz")):
                return word + "e"
            if _double_consonant(word) and word[-1] not in "lsz":
                return word[:-1]
            if _measure(word) == 1 and _cvc(word):
                return word + "e"
            return word
    return word


def _step4(word: str) -> str:
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if suffix == "ion" and not base.endswith(("s", "t")):
                return word
            return base if _measure(base) > 1 else word
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter (1980) suffix stripping; words of one or two letters are left alone."""
    if len(word) <= 2 or not word.isalpha():
        return word
    word = _step1(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    word = _step4(word)
    if word.endswith("e"):
        base = word[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            word = base
    if _measure(word) > 1 and _double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word
