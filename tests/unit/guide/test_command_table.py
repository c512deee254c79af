"""The command table and the parser agree, and a mistyped command names the likely one."""

from __future__ import annotations

import pytest

from backend.errors import CommandError, ErrorKind, SylkError
from backend.guide.routing import dsl
from backend.guide.routing.command_table import (
    COMMAND_WORDS,
    COMMANDS,
    UnknownCommandError,
    closest_command,
)


@pytest.mark.parametrize("word", sorted(COMMAND_WORDS))
def test_every_spelling_in_the_table_is_parsed(word: str) -> None:
    # Bare, a command may lack its arguments: that is a usage error, never "unknown"
    # and never "listed but not understood".
    try:
        dsl.parse(word)
    except UnknownCommandError:
        pytest.fail(f"{word} is in the table but the parser calls it unknown")
    except CommandError as error:
        assert "not understood" not in str(error)


def test_a_head_outside_the_table_is_refused_even_if_it_looks_like_one() -> None:
    with pytest.raises(UnknownCommandError) as caught:
        dsl.parse("/frobnicate now")
    assert caught.value.error_kind is ErrorKind.INVALID
    assert isinstance(caught.value, SylkError)
    assert caught.value.details == {
        "reason": "unknown_command",
        "command": "/frobnicate",
        "suggestion": None,
    }


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("/stauts", "/status"),
        ("/STAUTS", "/status"),
        ("/sesion new", "/session"),
        ("/hlep", "/help"),
        ("/modle", "/model"),
        ("/stat", "/status"),
        ("/dif", "/diff"),
        ("/aproval ask", "/approval"),
    ],
)
def test_a_typo_is_answered_with_did_you_mean(typed: str, meant: str) -> None:
    with pytest.raises(UnknownCommandError) as caught:
        dsl.parse(typed)
    word = typed.split(maxsplit=1)[0]
    assert str(caught.value) == f"unknown command {word}; did you mean {meant}? (see /help)"
    assert caught.value.suggestion == meant


@pytest.mark.parametrize("typed", ["/", "/x", "/zzzzzz", "/usr/bin/env"])
def test_no_guess_when_nothing_is_close(typed: str) -> None:
    assert closest_command(typed) is None


def test_each_command_is_listed_once_with_usage_and_summary() -> None:
    names = [s for c in COMMANDS for s in c.spellings]
    assert len(names) == len(set(names))
    for command in COMMANDS:
        assert command.name.startswith("/")
        assert command.usage.startswith(command.name)
        assert command.summary
