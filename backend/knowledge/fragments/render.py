"""Markdown for the three query modes, and the budget-aware excerpting they share.

``catalog`` lists what exists (URIs to load on demand), ``full`` assembles the
fragments themselves, ``index`` answers in a handful of lines. Excerpting picks a
fragment's sections that mention the query's words when the whole fragment does
not fit what is left of the budget: a reader wants the relevant part, not the
first N characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from backend.knowledge.fragments.fragment import CHARS_PER_TOKEN, Fragment, estimate_tokens
from backend.knowledge.fragments.index import IndexHit
from backend.knowledge.fragments.match import Scored, stem, word_match

_SECTION = re.compile(r"^(?=##\s)", re.MULTILINE)


def _source(frag: Fragment) -> str:
    return "built-in" if frag.builtin else f"from {frag.path}"


def render_catalog(query: str, scored: Sequence[Scored]) -> str:
    total = sum(s.fragment.estimated_tokens for s in scored)
    lines = [
        "# Library catalog",
        "",
        f"**Query:** {query or '(filters only)'}  ",
        f"**Matches:** {len(scored)} (about {total:,} tokens in all)",
        "",
        "Load a fragment on demand with `academic.library.get` and its URI.",
        "",
    ]
    for n, item in enumerate(scored, 1):
        frag = item.fragment
        lines.append(
            f"{n}. `{frag.uri}` ({frag.title}, score {item.score}, ~{frag.estimated_tokens} "
            f"tokens): {frag.summary}"
        )
    return "\n".join(lines)


def fragment_block(frag: Fragment, score: int | None = None, body: str | None = None) -> str:
    head = [f"## {frag.category}: {frag.title}", f"`{frag.uri}` ({_source(frag)})"]
    if score is not None:
        head.append(f"**Relevance score:** {score}  ")
    if frag.tags:
        head.append(f"**Tags:** {', '.join(frag.tags)}  ")
    if frag.capabilities:
        head.append(f"**Capabilities:** {'; '.join(frag.capabilities)}")
    return "\n".join(head) + "\n\n" + strip_title(body if body is not None else frag.body)


def strip_title(body: str) -> str:
    """The body without its leading ``# Title`` (the block header already names it)."""
    return re.sub(r"\A#\s+[^\n]*\n+", "", body.strip())


def render_full(query: str, selected: Sequence[Scored], max_tokens: int) -> str:
    total = sum(s.fragment.estimated_tokens for s in selected)
    note = " (over budget: the top three are always included)" if total > max_tokens else ""
    lines = [
        f"# Library: {query or '(filters only)'}",
        "",
        f"{len(selected)} fragment(s), about {total:,} of {max_tokens:,} tokens{note}.",
    ]
    blocks = [fragment_block(s.fragment, s.score) for s in selected]
    return "\n\n".join(["\n".join(lines), *blocks]).rstrip() + "\n"


def render_index(query: str, hits: Sequence[IndexHit]) -> str:
    lines = [f"Library index: {query}"]
    for hit in hits:
        frag = hit.fragment
        lines.append(f"- `{frag.uri}` ~{frag.estimated_tokens}t: {hit.scenario}")
    return "\n".join(lines)


def render_index_fallback(query: str, scored: Sequence[Scored]) -> str:
    lines = [f"Library index: {query} (no index hit; best scored fragments)"]
    for item in scored:
        frag = item.fragment
        lines.append(f"- `{frag.uri}` ~{frag.estimated_tokens}t: {frag.summary}")
    return "\n".join(lines)


def sections(body: str) -> list[str]:
    """The body cut at its ``##`` headings (the lead-in before the first one included)."""
    return [part.strip() for part in _SECTION.split(strip_title(body)) if part.strip()]


def excerpt(frag: Fragment, words: Sequence[str], max_tokens: int) -> str:
    """The whole body if it fits, else its most relevant sections that fit, in order."""
    body = strip_title(frag.body)
    if estimate_tokens(body) <= max_tokens:
        return body
    parts = sections(body)
    stems = [stem(w) for w in words]

    def relevance(part: str) -> int:
        lowered = part.lower()
        return sum(1 for w in stems if word_match(w, lowered))

    order = sorted(range(len(parts)), key=lambda i: (-relevance(parts[i]), i))
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = estimate_tokens(parts[i])
        if used + cost <= max_tokens:
            chosen.add(i)
            used += cost
    if not chosen:  # not even one section fits: cut the best one at a paragraph
        best = parts[order[0]]
        limit = max_tokens * CHARS_PER_TOKEN
        cut = best[:limit].rsplit("\n\n", 1)[0] if "\n\n" in best[:limit] else best[:limit]
        return cut.rstrip() + "\n\n(... cut to fit; load the URI for the rest)"
    kept = [parts[i] for i in sorted(chosen)]
    if len(chosen) < len(parts):
        kept.append("(... more in the full fragment; load the URI for the rest)")
    return "\n\n".join(kept)
