"""Turning a question into search words, and search words into an FTS5 query.

A user's words go into SQLite's MATCH syntax only as quoted prefix terms, so
quotes, operators or parentheses in a question can never make a query fail or
mean something else. On PostgreSQL the same match becomes a ``to_tsquery`` text
(:func:`tsquery`), whose lexemes are only the words inside those quotes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Words that say "this is a history question" but name nothing to look for.
_STOP_WORDS = (
    "a an the is are was were be been being to of in on at for and or but not no how what "
    "when where which who whom why does do did done doing can could should would will shall "
    "may might must we us our ours my me i you your it its this that these those there here "
    "please show tell find about with from by as into than then so if any some all "
    "have has had get got give list know remember recall say said talk talked discuss "
    "discussed discussion mention mentioned decide decided before previously earlier ago "
    "last past time times recent recently lately today yesterday week weeks month months "
    "year years day days hour hours again ever back while things thing stuff work worked "
    "happen happened handle handled approach us session sessions left off leave pick up "
    "where continue resume status result outcome similar like same seen problem problems "
    "change changed changes modify modified modification modifications update updated "
    "going new latest anything everything"
)
STOP = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 12


def words(text: str) -> list[str]:
    """Lower-case words of ``text``; snake_case and camelCase split into their parts."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [w.lower() for w in _WORD.findall(spaced)]


def search_terms(*texts: str | None) -> list[str]:
    """The content words of ``texts`` in first-seen order (stop words dropped).

    Empty for a question that is only filler ("what did we do yesterday"): it
    names no topic, so it asks for everything in its time range.
    """
    found: list[str] = []
    for text in texts:
        if text:
            found.extend(words(text))
    content = [w for w in found if w not in STOP and (len(w) > 1 or w.isdigit())]
    return list(dict.fromkeys(content))[:MAX_TERMS]


def stem(word: str) -> str:
    """A crude stem for comparing topics (the FTS index does its own, Porter, stemming)."""
    for suffix in ("ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def topic(*texts: str | None) -> frozenset[str]:
    return frozenset(stem(w) for w in search_terms(*texts))


def fts_match(terms: Iterable[str], *, any_term: bool = False) -> str | None:
    """An FTS5 MATCH expression: every term (or, with ``any_term``, any) as a prefix."""
    quoted = [f'"{t.replace(chr(34), "")}"*' for t in terms if t.replace('"', "")]
    if not quoted:
        return None
    return (" OR " if any_term else " AND ").join(quoted)


# The match grammar fts_match (and the code's own constants) write: quoted phrases,
# each maybe a prefix, joined by AND / OR, grouped by parentheses.
_MATCH_TOKEN = re.compile(r'\s*(?:"([^"]*)"(\*?)|(AND|OR)\b|([()]))')
_TSQUERY_OPS = {"AND": " & ", "OR": " | "}


def tsquery(match: str) -> str:
    """The FTS5 ``match`` (as :func:`fts_match` writes it) as PostgreSQL ``to_tsquery``
    input: ``"test"* AND "fix"`` -> ``'test':* & 'fix'``. A phrase of several words
    becomes ``<->``-joined lexemes. Anything else in ``match`` raises ValueError."""
    out: list[str] = []
    at = 0
    while at < len(match.rstrip()):
        found = _MATCH_TOKEN.match(match, at)
        if found is None or found.end() == at:
            raise ValueError(f"not a match expression at {at}")
        phrase, star, op, paren = found.groups()
        if phrase is not None:
            parts = [w.lower() for w in _WORD.findall(phrase)]
            if not parts:
                raise ValueError("an empty phrase")
            lexemes = [f"'{w}'" for w in parts]  # [^\W_]+: no quote can be inside
            lexemes[-1] += ":*" if star else ""
            out.append(" <-> ".join(lexemes))
        else:
            out.append(_TSQUERY_OPS[op] if op else paren)
        at = found.end()
    return "".join(out)


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0]
    return f"{cut or flat[: limit - 1]}…"


def plain(text: str) -> str:
    """``text`` as its words, to tell the same words said again."""
    return " ".join(words(text))
