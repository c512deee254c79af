"""What Tab offers at the repl's prompt: `/` commands and their first words, session
names after ``/session switch`` (and its kin), ``@agents``.

Pure and UI-free, so the repl loads no Textual (the composer's own completion lives in
the ``widgets`` package, which does). The commands and their words are read from the
Guide's command table (``backend.guide.routing.command_table.COMMANDS``), imported on
the first Tab, so the offers cannot drift from what the Guide accepts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

LOCAL_COMMANDS = {"/quit": "leave the repl (also ctrl+d)", "/exit": "leave the repl"}
"""Commands the repl answers itself; the engine never sees them."""
SESSION_VERBS_TAKING_A_NAME = frozenset({"switch", "suspend", "resume", "complete"})
MAX_OFFERS = 50
_USAGE_WORD = re.compile(r"(?<=[\s\[|])([a-z][a-z_-]*)(?=[\s\]|]|$)")


@dataclass(frozen=True)
class Offer:
    """One replacement for the word being completed, and what it is (shown beside it)."""

    text: str
    meta: str


@cache
def command_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each spelling of each command: its summary and the literal words its usage names
    (``/approval`` -> ``read-only``, ``ask``, ...; placeholders such as ``ID`` are not)."""
    from backend.guide.routing.command_table import COMMANDS

    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in COMMANDS:
        tail = spec.usage.split(None, 1)[1] if " " in spec.usage else ""
        words = tuple(dict.fromkeys(_USAGE_WORD.findall(" " + tail)))
        for spelling in spec.spellings:
            table[spelling] = (spec.summary, words)
    for name, summary in LOCAL_COMMANDS.items():
        table[name] = (summary, ())
    return table


@cache
def agent_names() -> tuple[str, ...]:
    """The roles an ``@mention`` reaches (the Guide routes; it is not mentioned)."""
    from backend.roles import AGENT_ROLES

    return tuple(sorted(role for role in AGENT_ROLES if role != "guide"))


def complete(before: str, session_names: Iterable[str] = ()) -> tuple[int, list[Offer]]:
    """Where the word ending at the cursor starts in ``before`` (the text up to the
    cursor) and what may replace it; no offers when nothing fits."""
    start = len(before) - len(re.split(r"\s", before)[-1])
    word, words = before[start:], before[:start].split()
    first_line = "\n" not in before
    offers: list[Offer] = []
    if first_line and not words and word.startswith("/"):
        table = command_table()
        offers = [Offer(c, table[c][0]) for c in sorted(table) if c.startswith(word.lower())]
    elif first_line and len(words) == 1 and words[0].startswith("/"):
        _, choices = command_table().get(words[0].lower(), ("", ()))
        offers = [Offer(w, words[0].lower()) for w in choices if w.startswith(word.lower())]
    elif first_line and len(words) == 2 and words[0].lower() == "/session":
        if words[1].lower() in SESSION_VERBS_TAKING_A_NAME:
            offers = _session_offers(word, session_names)
    elif word.startswith("@") and not words:
        offers = [Offer(f"@{a}", "agent") for a in agent_names() if f"@{a}".startswith(word)]
    return start, offers[:MAX_OFFERS]


def _session_offers(word: str, names: Iterable[str]) -> list[Offer]:
    typed = word.strip("\"'").lower()
    found = sorted({n for n in names if n.lower().startswith(typed) and n.isprintable()})
    return [Offer(shlex.quote(n) if re.search(r"\s|['\"]", n) else n, "session") for n in found]
