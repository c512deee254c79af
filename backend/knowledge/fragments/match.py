"""Scoring fragments against a query, the way Orchestr8's fuzzy matcher does.

Weights follow the seed design: a query keyword found in a fragment's tags is
worth +10, in its capabilities +8, in its useWhen scenarios +5 (each counted once
per keyword); a requested category adds +15; a fragment under 1000 tokens gets
+5 (small answers are cheaper to load); a fragment missing a required tag is out.
Matching is by word prefix on lightly stemmed words rather than by raw
substring, so "go" finds "goroutines" but not "django", and "retries" finds
"retry".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backend.knowledge.fragments.fragment import Fragment

TAG_WEIGHT = 10
CAPABILITY_WEIGHT = 8
USE_WHEN_WEIGHT = 5
CATEGORY_BONUS = 15
SMALL_BONUS = 5
SMALL_TOKENS = 1000
MIN_SCORE = 10
ALWAYS_INCLUDED = 3  # full mode keeps the top three even over budget
EARLY_STOP = 0.8  # ... and stops adding once 80% of the budget is used

# Generic words, plus the words every best-practice question carries (they say
# nothing about which fragment is wanted).
_STOP_TEXT = """a an and are as at be been being but by can could did do does doing for from had has
    have how i if in into is it its me my of on or our should so than that the their them then
    there these they this to too us use using was we were what when where which while who why
    will with would you your about any some way ways best practice practices recommended
    recommend good better right proper properly correct correctly tips advice guide guidance
    want need help please tell show explain know code
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
ALIASES = {
    "py": "python",
    "ts": "typescript",
    "js": "javascript",
    "golang": "go",
    "rs": "rust",
    "node": "javascript",
    "nodejs": "javascript",
    "sqli": "sql",
    "perf": "performance",
    "secret": "secrets",
    "tests": "testing",
    "test": "testing",
}
_WORD = re.compile(r"[a-z0-9][a-z0-9+#]*")
# Tags that name a programming language (after ALIASES): a question naming one of
# them is not answered with a fragment written for another.
LANGUAGES = frozenset({
    "python", "go", "rust", "javascript", "typescript", "java", "kotlin", "c", "c++", "c#",
    "ruby", "php", "swift", "scala", "elixir", "haskell", "lua", "zig", "bash", "shell",
})  # fmt: skip


def stem(word: str) -> str:
    """A deliberately small stemmer: enough for plural and -ing/-ed forms to meet."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + repl
    return word


def keywords(text: str) -> list[str]:
    """Lower-cased, stop-word-free, unique query words (aliases expanded), in order."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text.lower()):
        word = ALIASES.get(raw, raw)
        if len(word) <= 1 or word in STOP_WORDS:
            continue
        seen.setdefault(word, None)
    return list(seen)


def normalise_query(text: str) -> str:
    """The cache key form of a query: its keywords, sorted."""
    return " ".join(sorted(keywords(text)))


def _words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text)]


def word_match(keyword: str, text_lc: str) -> bool:
    """True when some word of ``text_lc`` starts with the (stemmed) keyword."""
    key = stem(keyword)
    return any(w.startswith(key) for w in _words(text_lc))


def _any(keyword: str, fields: Iterable[str]) -> bool:
    return any(word_match(keyword, f) for f in fields)


@dataclass(frozen=True)
class Scored:
    fragment: Fragment
    score: int


def score(
    fragment: Fragment,
    words: Sequence[str],
    *,
    category: str | None = None,
    required_tags: Sequence[str] = (),
) -> int:
    """The seed's multi-factor score; 0 means disqualified."""
    if required_tags and not all(t.lower() in fragment._tags_lc for t in required_tags):
        return 0
    total = 0
    if category and fragment.category == category:
        total += CATEGORY_BONUS
    for word in words:
        if _any(word, fragment._tags_lc):
            total += TAG_WEIGHT
        if _any(word, fragment._caps_lc):
            total += CAPABILITY_WEIGHT
        if _any(word, fragment._use_lc):
            total += USE_WHEN_WEIGHT
    if fragment.estimated_tokens < SMALL_TOKENS:
        total += SMALL_BONUS
    return total


def rank(
    fragments: Iterable[Fragment],
    query: str,
    *,
    category: str | None = None,
    required_tags: Sequence[str] = (),
    min_score: int = MIN_SCORE,
) -> list[Scored]:
    """Fragments scoring at least ``min_score``, best first (ties: smaller, then by URI).

    A category filter narrows the candidates to that category: asking for
    "security" fragments should never answer with testing ones.
    """
    words = keywords(query)
    out: list[Scored] = []
    for frag in fragments:
        if category and frag.category != category:
            continue
        value = score(frag, words, category=category, required_tags=required_tags)
        if value >= min_score and (words or category or required_tags):
            out.append(Scored(frag, value))
    out.sort(key=lambda s: (-s.score, s.fragment.estimated_tokens, s.fragment.uri))
    return out


def asked_languages(words: Iterable[str]) -> frozenset[str]:
    """The programming languages a query's keywords name."""
    return frozenset(w for w in words if w in LANGUAGES)


def for_other_language(fragment: Fragment, asked: frozenset[str]) -> bool:
    """True when ``fragment`` is written for languages, none of which was asked about.

    Language-neutral fragments (retries, SQL injection) are never "other".
    """
    if not asked:
        return False
    own = {ALIASES.get(t, t) for t in fragment._tags_lc} & LANGUAGES
    return bool(own) and not own & asked


def tagged_with(fragment: Fragment, words: Sequence[str]) -> bool:
    """Is ``fragment`` tagged with any of ``words`` (prefix match on stemmed words)?"""
    return any(_any(word, fragment._tags_lc) for word in words)


def select_within_budget(scored: Sequence[Scored], max_tokens: int) -> list[Scored]:
    """The seed's selection: the top three always, then whatever fits, stopping at 80%."""
    selected: list[Scored] = []
    total = 0
    for item in scored:
        cost = item.fragment.estimated_tokens
        if len(selected) < ALWAYS_INCLUDED or total + cost <= max_tokens:
            selected.append(item)
            total += cost
        if len(selected) >= ALWAYS_INCLUDED and total > max_tokens * EARLY_STOP:
            break
    return selected
