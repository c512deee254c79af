"""Allow and deny rules for commands: ``git status`` (the whole command) or a prefix
pattern ending in ``*``.

``pytest *`` matches ``pytest`` followed by any words (``pytest``, ``pytest -q x``,
never ``pytest-evil``); ``git push*`` matches any command whose words, joined by one
space, start with ``git push`` (``git push``, ``git push --force``, ``git pushy``).
A ``*`` anywhere else is an ordinary character.

An allow rule matches only one simple command (see
:func:`~backend.approvals.command_shape.simple_words`), except that an exact rule
also matches the very text it was made from (a compound command the user allowed
for the session, word for word). A deny rule matches if it matches any command the
line could run (:func:`~backend.approvals.command_shape.deny_candidates`); a line
that cannot be split is denied if its raw text contains the rule's words.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import cached_property

from backend.approvals.command_shape import (
    Words,
    deny_candidates,
    program,
    simple_words,
    split_words,
    splittable,
)

# Programs whose first word after the name picks a sub-command: `git commit *`
# is the useful prefix, not `git *`.
_SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "pip", "pip3", "poetry", "docker",
        "kubectl", "make", "just", "dotnet", "bundle", "gradle", "mvn", "hatch", "pdm", "nox",
        "tox", "bun", "deno", "rustup", "brew", "apt", "gh",
    }
)  # fmt: skip
_MODULE_RUNNERS = frozenset({"python", "python3", "py"})


@dataclass(frozen=True)
class Rule:
    text: str

    @cached_property
    def _parsed(self) -> tuple[str, Words]:
        """(kind, words): kind is "exact", "words" (`pytest *`) or "text" (`git push*`)."""
        text = self.text.strip()
        if text.endswith(" *"):
            return "words", tuple(split_words(text[:-2]) or ())
        if text.endswith("*"):
            return "text", tuple(split_words(text[:-1]) or (text[:-1],))
        return "exact", tuple(split_words(text) or (text,))

    def matches_words(self, words: Words) -> bool:
        kind, mine = self._parsed
        if not mine:
            return False
        if kind == "exact":
            return words == mine
        if kind == "words":
            return words[: len(mine)] == mine
        return " ".join(words).startswith(" ".join(mine))

    def allows(self, line: str) -> bool:
        """Does this allow rule cover ``line``? Only a simple command, or this exact text."""
        if self._parsed[0] == "exact" and line.strip() == self.text.strip():
            return True
        words = simple_words(line)
        return words is not None and self.matches_words(words)

    def denies(self, line: str) -> bool:
        """Does this deny rule catch anything ``line`` could run?"""
        if any(self.matches_words(words) for words in deny_candidates(line)):
            return True
        if splittable(line):
            return False
        raw = " ".join(line.replace("'", " ").replace('"', " ").split())
        return " ".join(self._parsed[1]) in raw


def first_match(rules: list[Rule] | tuple[Rule, ...], line: str, *, deny: bool) -> Rule | None:
    for rule in rules:
        if rule.denies(line) if deny else rule.allows(line):
            return rule
    return None


def session_rules(line: str) -> tuple[str, ...]:
    """What "allow for this session" may keep for ``line``: its prefix pattern (for one
    simple command), then the exact command."""
    words = simple_words(line)
    if words is None:
        return (line.strip(),)
    name = program(words)
    if name != words[0]:  # run by path: only this exact command
        return (line.strip(),)
    prefix: Words = words[:1]
    if name in _SUBCOMMAND_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
        prefix = words[:2]
    elif name in _MODULE_RUNNERS and len(words) > 2 and words[1] == "-m":
        prefix = words[:3]
    return (f"{shlex.join(prefix)} *", shlex.join(words))


__all__ = ["Rule", "first_match", "session_rules"]
