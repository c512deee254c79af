"""What a shell command line is made of, as far as the approval rules need to know.

A model writes the command line, so it is hostile input. Two questions are asked
of it, and each errs on the careful side:

- :func:`simple_words`: is it *one* simple command (no ``;``, ``&&``, ``||``, ``|``,
  ``&``, newline, ``$(``, backticks, ``<``/``>`` redirection, no leading ``NAME=value``,
  no ``bash -c``/``eval``/``env``/``sudo``-style wrapper)? Only then may a prefix allow
  rule such as ``pytest *`` match it; anything else asks.
- :func:`deny_candidates`: every command it could run, so a deny rule matches any
  segment of a compound command, the script inside ``bash -c '...'`` or ``eval``,
  the command behind ``env``, ``sudo``, ``xargs`` and the like, and the insides of
  ``$(...)`` and backticks; a program named by path is tried by its base name too.

Words come from :mod:`shlex` in POSIX mode with ``punctuation_chars``, so quotes
are honoured (``pytest -k "a and b"`` is one simple command) and operators are
tokens of their own. A line :mod:`shlex` cannot split (an unbalanced quote) is
never simple, and deny rules fall back to matching its raw text.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

Words = tuple[str, ...]

_PUNCTUATION = frozenset("();<>|&")
# Text that makes a line something other than one plain command, wherever it appears
# (inside double quotes `$(...)` and backticks still run).
_NEVER_SIMPLE = ("\n", "\r", "$(", "`", "<(", ">(")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox"})
# Programs that run another command given as their arguments.
WRAPPERS = frozenset(
    {
        "env", "exec", "command", "builtin", "eval", "sudo", "doas", "su", "nohup",
        "setsid", "nice", "ionice", "time", "timeout", "xargs", "stdbuf", "chroot",
        "unshare", "nsenter", "runuser", "watch", "strace", "ltrace", "flock", "script",
        "parallel", "chronic", "unbuffer",
    }
)  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPTION_VALUE = re.compile(r"^(-.*|\d+(\.\d+)?[smhd]?|[A-Za-z_][A-Za-z0-9_]*=.*)$")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_MAX_DEPTH = 4
_WRAPPER_STARTS = 3
_EXEC_OPTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def split_words(line: str) -> list[str] | None:
    """The line's words and operators, or None if it cannot be split (a stray quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def is_operator(word: str) -> bool:
    return bool(word) and all(ch in _PUNCTUATION for ch in word)


def _is_redirection(word: str) -> bool:
    return is_operator(word) and ("<" in word or ">" in word)


def simple_words(line: str) -> Words | None:
    """The words of ``line`` if it is one simple command a prefix rule may match."""
    if any(mark in line for mark in _NEVER_SIMPLE):
        return None
    words = split_words(line)
    if not words or any(is_operator(w) for w in words):
        return None
    if _ASSIGNMENT.match(words[0]) or wrapped(words):
        return None
    return tuple(words)


def program(words: Words) -> str:
    """The program a command runs, by base name (``/usr/bin/rm`` -> ``rm``)."""
    return PurePosixPath(words[0]).name if words else ""


def wrapped(words: Words | list[str]) -> bool:
    """Does this command hand the rest of its words (or a script) to another program?"""
    name = program(tuple(words))
    return name in SHELLS or name in WRAPPERS


def _segments(words: list[str]) -> list[list[str]]:
    """Split at operators (``;``, ``&&``, ``|``, parentheses ...); a redirection and the
    file it names are dropped, so ``> log rm -rf x`` is still ``rm -rf x``."""
    found: list[list[str]] = [[]]
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if _is_redirection(word):
            skip_next = True
            continue
        if is_operator(word):
            found.append([])
            continue
        found[-1].append(word)
    return [segment for segment in found if segment]


def _unwrapped(words: list[str], depth: int) -> list[Words]:
    """The command itself and whatever it runs on behalf of its words."""
    if depth > _MAX_DEPTH:
        return []
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return []
    found: list[Words] = [tuple(words)]
    if program(tuple(words)) != words[0]:
        found.append((program(tuple(words)), *words[1:]))
    name = program(tuple(words))
    rest = words[1:]
    if name in SHELLS:
        for index, word in enumerate(rest):
            if word.startswith("-") and "c" in word.lstrip("-") and index + 1 < len(rest):
                found.extend(_candidates(rest[index + 1], depth + 1))
                break
        else:  # `bash script.sh`, `sh -s < x`: whatever it runs, look at its arguments
            found.extend(_unwrapped(rest, depth + 1) if rest else [])
    elif name == "eval":
        found.extend(_candidates(" ".join(rest), depth + 1))
    elif name in WRAPPERS:
        while rest and _OPTION_VALUE.match(rest[0]):
            rest = rest[1:]
        # An option's value may come first (`sudo -u root rm`): try a few starting words.
        for start in range(min(len(rest), _WRAPPER_STARTS)):
            found.extend(_unwrapped(rest[start:], depth + 1))
    for marker in _EXEC_OPTIONS & set(rest):  # find ... -exec CMD ;
        found.extend(_unwrapped(rest[rest.index(marker) + 1 :], depth + 1))
    return found


def _candidates(line: str, depth: int) -> list[Words]:
    if depth > _MAX_DEPTH:
        return []
    found: list[Words] = []
    for chunk in re.split(r"[\r\n]+", line):
        words = split_words(chunk)
        if words is None:
            continue
        for segment in _segments(words):
            found.extend(_unwrapped(segment, depth))
    for match in _SUBSTITUTION.finditer(line):
        found.extend(_candidates(match.group(1) or match.group(2) or "", depth + 1))
    return found


def deny_candidates(line: str) -> list[Words]:
    """Every command ``line`` could run, as words, for deny rules to look at."""
    return _candidates(line, 0)


def splittable(line: str) -> bool:
    """Can every line of ``line`` be split into words (no stray quote)?"""
    return all(split_words(chunk) is not None for chunk in re.split(r"[\r\n]+", line))


__all__ = [
    "SHELLS",
    "WRAPPERS",
    "Words",
    "deny_candidates",
    "is_operator",
    "program",
    "simple_words",
    "split_words",
    "splittable",
    "wrapped",
]
