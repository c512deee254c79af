"""What Tab offers in the composer: `/` commands and their words, `@agents`, session
names and paths inside the session's workspace.

Pure apart from listing one workspace folder: given the text before the cursor it says
which word is being completed (where it starts) and what could replace it. The command
table is read from the Guide's own parser (``backend.guide.routing.dsl``), imported on
the first Tab so the first frame does not wait for it, and so the offers cannot drift
from what the Guide accepts.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

MAX_OFFERS = 50
"""Offers shown at most; the rest narrow as the user types."""
MAX_ENTRIES_SCANNED = 5000
"""A folder's entries read at most for one Tab (a huge folder costs no more)."""
SESSION_VERBS_TAKING_A_NAME = frozenset({"switch", "suspend", "resume", "complete"})


@dataclass(frozen=True)
class CompletionSources:
    """Where the offers come from that change while the app runs (the screen hands them)."""

    session_names: Callable[[], Iterable[str]] = lambda: ()
    workspace: Callable[[], Path | None] = lambda: None


@dataclass(frozen=True)
class Offer:
    """One replacement for the word being completed, and what it is (shown beside it)."""

    text: str
    kind: str


@dataclass(frozen=True)
class Completion:
    """The word at ``start``..``end`` of the cursor's line and what may replace it."""

    start: int
    end: int
    offers: list[Offer] = field(default_factory=list)

    def common_prefix(self) -> str:
        texts = [offer.text for offer in self.offers]
        shortest = min(texts, key=len, default="")
        for n, character in enumerate(shortest):
            if any(text[n] != character for text in texts):
                return shortest[:n]
        return shortest


@cache
def command_words() -> dict[str, tuple[str, ...]]:
    """Each `/` command the Guide knows, with the words its first argument may be."""
    from backend.config.approvals import MODE_NAMES
    from backend.guide.routing import dsl, session_dsl
    from backend.roles import AGENT_ROLES

    heads = {m.group(1) for m in re.finditer(r"(?m)^\s*(/[a-z]+)", dsl.HELP_TEXT)}
    table: dict[str, tuple[str, ...]] = dict.fromkeys(sorted(heads), ())
    table["/session"] = tuple(session_dsl.USAGE)
    table["/help"] = tuple(dsl.HELP_TOPICS)
    table["/approval"] = tuple(MODE_NAMES)
    table["/network"] = ("on", "off")
    table["/qa"] = dsl.QA_ACTIONS
    table["/plan"] = ("show", "approve", "reject")
    table["/tools"] = ("choose", *dsl.TOOL_CATEGORIES)
    table["/deadletters"] = ("list", "replay", "purge")
    table["/remember"] = tuple(dsl.RECORD_CATEGORIES)
    table["/model"] = ("reset", *AGENT_ROLES)
    table["/mcp"] = ("enable", "disable", "refresh")
    return table


@cache
def agent_names() -> tuple[str, ...]:
    """The roles an ``@mention`` reaches (the Guide routes, it is not mentioned)."""
    from backend.roles import AGENT_ROLES

    return tuple(sorted(role for role in AGENT_ROLES if role != "guide"))


def complete(before: str, *, first_line: bool, sources: CompletionSources) -> Completion | None:
    """Offers for the word ending at the cursor; ``before`` is the line up to the cursor."""
    start = len(before) - len(re.split(r"\s", before)[-1])
    word = before[start:]
    words = before[:start].split()
    end = len(before)
    if first_line and not words and word.startswith("/"):
        offers = [Offer(c, "command") for c in command_words() if c.startswith(word.lower())]
    elif first_line and len(words) == 1 and words[0].startswith("/"):
        choices = command_words().get(words[0].lower(), ())
        offers = [Offer(w, words[0]) for w in choices if w.startswith(word.lower())]
    elif first_line and len(words) == 2 and words[0].lower() == "/session":
        if words[1].lower() not in SESSION_VERBS_TAKING_A_NAME:
            return None
        offers = _session_offers(word, sources.session_names())
    elif word.startswith("@") and not words:
        offers = [Offer(f"@{a}", "agent") for a in agent_names() if f"@{a}".startswith(word)]
    else:
        workspace = sources.workspace()
        if workspace is None or not word:
            return None
        offers = path_offers(workspace, word)
    if not offers:
        return None
    return Completion(start, end, offers[:MAX_OFFERS])


def _session_offers(word: str, names: Iterable[str]) -> list[Offer]:
    typed = word.strip("\"'").lower()
    found = sorted({n for n in names if n.lower().startswith(typed)})
    return [Offer(shlex.quote(n) if re.search(r"\s|['\"]", n) else n, "session") for n in found]


def path_offers(workspace: Path, word: str) -> list[Offer]:
    """Entries of the folder ``word`` names, inside ``workspace`` only, that start with its
    last part (folders end in ``/``). A word that leaves the workspace (absolute, ``..``,
    a link pointing out) offers nothing."""
    if word.startswith(("/", "~")) or "\\" in word:
        return []
    folder_part, _, prefix = word.rpartition("/")
    if any(part == ".." for part in folder_part.split("/")):
        return []
    try:
        root = workspace.resolve(strict=True)
        folder = (root / folder_part).resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    if not folder.is_relative_to(root) or not folder.is_dir():
        return []
    lead = f"{folder_part}/" if folder_part else ""
    offers: list[Offer] = []
    try:
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_ENTRIES_SCANNED:
                    break
                name = entry.name
                if not name.startswith(prefix) or (name.startswith(".") and not prefix):
                    continue
                if not name.isprintable():  # a hostile name could drive the terminal
                    continue
                is_dir = _is_dir_inside(entry, root)
                offers.append(
                    Offer(f"{lead}{name}{'/' if is_dir else ''}", "dir" if is_dir else "file")
                )
    except OSError:
        return []
    return sorted(offers, key=lambda offer: offer.text)


def _is_dir_inside(entry: os.DirEntry[str], root: Path) -> bool:
    """A folder to descend into: a link to a folder outside the workspace is not one."""
    try:
        if not entry.is_symlink():
            return entry.is_dir()
        target = Path(entry.path).resolve(strict=True)
        return target.is_dir() and target.is_relative_to(root)
    except OSError:
        return False
