"""The /session DSL: parsed exactly, and every mistake answered with its usage."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing.session_dsl import SessionCommand, is_command, parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/session new", SessionCommand("new")),
        ("/session new my feature", SessionCommand("new", name="my feature")),
        ('/session new "quoted name"', SessionCommand("new", name="quoted name")),
        ("/session list", SessionCommand("list")),
        ("/SESSION LIST", SessionCommand("list")),
        ("/session switch 2", SessionCommand("switch", ref="2")),
        ("  /session resume abc123 ", SessionCommand("resume", ref="abc123")),
        ("/session suspend", SessionCommand("suspend")),
        ("/session suspend beta", SessionCommand("suspend", ref="beta")),
        ("/session complete", SessionCommand("complete")),
        ("/help", SessionCommand("help")),
    ],
)
def test_parses(text: str, expected: SessionCommand) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("/session", "needs a verb"),
        ("/session frob", "unknown /session verb"),
        ("/session switch", "/session switch ID|NAME|NUMBER"),
        ("/session switch a b", "exactly one session"),
        ("/session resume", "/session resume ID|NAME|NUMBER"),
        ("/session list extra", "takes no arguments"),
        ("/session suspend a b", "one session at most"),
        ("/nope", "unknown command /nope"),
        ('/session new "unterminated', "cannot read command"),
    ],
)
def test_mistakes_say_how_to_type_it(text: str, fragment: str) -> None:
    with pytest.raises(CommandError) as info:
        parse(text)
    assert fragment in str(info.value)


def test_is_command() -> None:
    assert is_command(" /session list")
    assert not is_command("please add /session support")
