"""/session fail|close|stats|snapshot|snapshots|restore: parsed, or refused with usage."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing.router import dsl_decision
from backend.guide.routing.session_dsl import SessionCommand, parse


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("/session fail", SessionCommand("fail")),
        ("/session fail the disk is gone", SessionCommand("fail", text="the disk is gone")),
        ("/session close", SessionCommand("close")),
        ("/session close 2", SessionCommand("close", ref="2")),
        ("/session stats", SessionCommand("stats")),
        ("/session stats 'my work'", SessionCommand("stats", ref="my work")),
        ("/session snapshot", SessionCommand("snapshot")),
        (
            "/session snapshot before the refactor",
            SessionCommand("snapshot", text="before the refactor"),
        ),
        ("/session snapshots", SessionCommand("snapshots")),
        ("/session restore ab12cd34", SessionCommand("restore", ref="ab12cd34")),
    ],
)
def test_lifecycle_verbs_parse(line: str, command: SessionCommand) -> None:
    assert parse(line) == command


@pytest.mark.parametrize(
    ("line", "usage"),
    [
        ("/session restore", "/session restore SNAPSHOT"),
        ("/session restore a b", "/session restore SNAPSHOT"),
        ("/session close a b", "/session close [ID|NAME|NUMBER]"),
        ("/session snapshots all", "/session snapshots"),
    ],
)
def test_bad_lifecycle_lines_say_how_to_type_them(line: str, usage: str) -> None:
    with pytest.raises(CommandError) as refused:
        parse(line)
    assert usage in str(refused.value)


def test_the_reason_travels_to_the_command() -> None:
    decision = dsl_decision("/session fail out of disk")
    assert decision.command == {"verb": "fail", "text": "out of disk"}
