"""Expected and actual values out of a failure message, where a framework says them.

Every framework words a failed comparison its own way; these read the common ones and
return ``(None, None)`` for anything else (a failure without a comparison has no
expected value, and a guess would mislead the engineer reading it):

- pytest's assertion rewriting: ``assert <actual> == <expected>`` (the left side is
  what the code produced, by the ``assert result == expected`` convention);
- jest: ``Expected: ...`` and ``Received: ...`` lines;
- vitest / chai: ``expected <actual> to be|equal|deeply equal <expected>``;
- Go's ``got X, want Y`` (either order) and ``expected X, got Y``.
"""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OPENERS, _CLOSERS = "([{", ")]}"
_JEST_EXPECTED = re.compile(r"^\s*Expected(?: value)?:\s?(?P<value>.*)$", re.MULTILINE)
_JEST_RECEIVED = re.compile(r"^\s*Received(?: value)?:\s?(?P<value>.*)$", re.MULTILINE)
_CHAI = re.compile(
    r"expected (?P<actual>.+?) to (?:be|equal|deeply equal|strictly equal|eql) "
    r"(?P<expected>.+?)(?:\s+//.*)?$",
    re.MULTILINE,
)
_GOT_WANT = re.compile(r"\bgot:?\s+(?P<actual>.+?),?\s+want:?\s+(?P<expected>.+)$", re.MULTILINE)
_WANT_GOT = re.compile(
    r"\b(?:want|expected):?\s+(?P<expected>.+?),?\s+(?:got|but got|actual):?\s+(?P<actual>.+)$",
    re.MULTILINE,
)

Values = tuple[str | None, str | None]


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def _split_equality(expr: str) -> tuple[str, str] | None:
    """``left == right`` split at the ``==`` outside any quotes and brackets."""
    depth, quote, i = 0, "", 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth -= 1
        elif depth == 0 and expr.startswith(" == ", i):
            return expr[:i].strip(), expr[i + 4 :].strip()
        i += 1
    return None


def pytest_values(message: str) -> Values:
    """(expected, actual) from pytest's rewritten ``assert`` message."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = first.removeprefix("AssertionError: ").strip()
    if not first.startswith("assert "):
        return None, None
    split = _split_equality(first[len("assert ") :])
    if split is None:
        return None, None
    actual, expected = split
    return expected, actual


def js_values(message: str) -> Values:
    """(expected, actual) from a jest or vitest failure message."""
    text = strip_ansi(message)
    expected, received = _JEST_EXPECTED.search(text), _JEST_RECEIVED.search(text)
    if expected and received:
        return expected["value"].strip(), received["value"].strip()
    if found := _CHAI.search(text):
        return found["expected"].strip(), found["actual"].strip()
    return None, None


def go_values(message: str) -> Values:
    """(expected, actual) from a Go test's ``got X, want Y`` style message."""
    for pattern in (_GOT_WANT, _WANT_GOT):
        if found := pattern.search(message):
            return found["expected"].strip(), found["actual"].strip()
    return None, None
