"""Keeping what the user states ("decision: ...", "we decided to ...") in the chronicle.

Recording needs no model: the statement is the entry. Its category comes from the
word it led with (the Guide's DSL puts it in the route's subject) or, for prose,
from how it is phrased; the entry belongs to the session it was said in.
"""

from __future__ import annotations

import re

from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category, ChronicleValidationError, parse_category

RECORDED = "Recorded (no model used)"
_DECIDED = re.compile(r"\b(?:decided|decision)\b", re.IGNORECASE)
_LESSON = re.compile(r"\b(?:lesson learned|learned that)\b", re.IGNORECASE)
_TITLE_WORDS = 8


def category_of(text: str, hint: str | None) -> Category:
    """The category named by ``hint`` (a DSL lead word's category), else read from ``text``."""
    if hint:
        try:
            return parse_category(hint)
        except ChronicleValidationError:
            pass  # a prose route's subject, not a category
    if _DECIDED.search(text):
        return Category.DECISION
    if _LESSON.search(text):
        return Category.INSIGHT
    return Category.GENERAL


def _label(category: Category) -> str:
    return {
        Category.DECISION: "a decision",
        Category.INSIGHT: "an insight",
        Category.PATTERN: "a pattern",
        Category.FAILURE: "a failure",
        Category.OPEN_THREAD: "an open thread",
    }.get(category, "a note")


async def record_statement(
    chronicle: Chronicle, session_id: str, text: str, hint: str | None
) -> str:
    """Store ``text`` in ``session_id``'s chronicle and say where it went."""
    statement = text.strip()
    category = category_of(statement, hint)
    words = statement.split()
    title = " ".join(words[:_TITLE_WORDS])  # a prefix of the content: shown once
    await chronicle.store(session_id, category, statement, title=title, agent="user")
    return (
        f"**{RECORDED}**: {_label(category)} in this session's chronicle: "
        f"\u201c{statement}\u201d\n\nIt stays private to this session unless promoted; "
        "ask about it later (\u201cwhat did we decide about ...\u201d) to find it."
    )


__all__ = ["RECORDED", "category_of", "record_statement"]
