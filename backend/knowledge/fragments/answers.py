"""The Academic's answer when no model is configured: the library's own words.

A best-practice question routed to the Academic with no model still deserves a
useful reply. This picks the best-matching fragments, gives the most relevant
parts of them within a token budget, names their URIs so the user can read
the rest, and says plainly that no model wrote it. When nothing matches it
says so and how to configure a model, rather than guessing.
"""

from __future__ import annotations

from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.fragments.match import (
    MIN_SCORE,
    asked_languages,
    for_other_language,
    keywords,
    rank,
    score,
    tagged_with,
)
from backend.knowledge.fragments.render import excerpt
from backend.llm.offline import how_to_configure

ANSWER_TOKENS = 1500
TOP_FRAGMENTS = 3
OFFLINE_LABEL = "*From Sylk's built-in library (no model used).*"


def answer_best_practice(
    library: FragmentLibrary,
    text: str,
    subject: str | None = None,
    *,
    max_tokens: int = ANSWER_TOKENS,
    no_model_hint: str | None = None,
) -> str:
    """Readable markdown answering ``text`` (about ``subject``) from the library alone."""
    hint = no_model_hint or how_to_configure(None)
    question = f"{subject} {text}" if subject and subject.lower() not in text.lower() else text
    ranked = rank(library.fragments(), question, min_score=MIN_SCORE)
    # "error handling in python" is not answered with Go's and Rust's error handling,
    # nor with Python fragments on other topics: a language filters the fragments, the
    # rest of the question (the topic) decides which are relevant.
    words = keywords(question)
    asked = asked_languages(words)
    ranked = [s for s in ranked if not for_other_language(s.fragment, asked)]
    topic = [w for w in words if w not in asked]
    relevance = {
        s.fragment.uri: score(s.fragment, topic) if asked and topic else s.score for s in ranked
    }
    # A fragment that matches only on one generic word is noise next to one that
    # matches the subject; keep those within reach of the best. Tags are the library's
    # curated index: once a fragment is tagged with the topic, fragments that only
    # mention it in passing (SQLite's "database is locked" errors, for error
    # handling) are left out.
    if ranked:
        floor = max(MIN_SCORE, max(relevance.values()) // 2)
        ranked = [s for s in ranked if relevance[s.fragment.uri] >= floor]
        tagged = [s for s in ranked if tagged_with(s.fragment, topic or words)]
        ranked = tagged or ranked
    top = ranked[:TOP_FRAGMENTS]
    about = subject or text.strip()
    if not top:
        return (
            f"{OFFLINE_LABEL}\n\n"
            f"The library has nothing on {about!r}, and with no model configured the "
            "Academic cannot research it further.\n\n"
            f"{hint}"
        )
    parts = [OFFLINE_LABEL, f"What the library holds on {about!r}:"]
    remaining = max_tokens
    for n, item in enumerate(top):
        frag = item.fragment
        source = "" if frag.builtin else f" (from your library folder: {frag.path})"
        header = f"## {frag.title}\nSource: `{frag.uri}`{source}"
        # The best match gets most of the budget; the others share what is left.
        share = remaining if n == len(top) - 1 else max(150, remaining * 2 // 3)
        if remaining < 100:
            parts.append(f"{header}\n\n{frag.summary} (load the URI for more)")
            continue
        body = excerpt(frag, words, share)
        remaining -= len(body) // 4
        parts.append(f"{header}\n\n{body}")
    related = [s.fragment.uri for s in ranked[TOP_FRAGMENTS : TOP_FRAGMENTS + 4]]
    if related:
        parts.append("Related fragments: " + ", ".join(f"`{u}`" for u in related))
    parts.append(f"A model can tailor this advice to your code. {hint}")
    return "\n\n".join(parts)
