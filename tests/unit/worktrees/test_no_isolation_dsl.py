"""``/session new [NAME] --no-isolation``: the flag is taken out of the name, anywhere
on the line, and carried to the command (a quoted ``"--no-isolation"`` is a flag too:
no session is named that)."""

from __future__ import annotations

import pytest

from backend.guide.routing.router import dsl_decision
from backend.guide.routing.session_dsl import NO_ISOLATION, USAGE, SessionCommand, parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/session new --no-isolation", SessionCommand("new", text=NO_ISOLATION)),
        ("/session new pad --no-isolation", SessionCommand("new", name="pad", text=NO_ISOLATION)),
        ("/session new --NO-ISOLATION a b", SessionCommand("new", name="a b", text=NO_ISOLATION)),
        ("/session new no isolation", SessionCommand("new", name="no isolation")),
    ],
)
def test_the_flag_is_parsed_out_of_the_name(text: str, expected: SessionCommand) -> None:
    assert parse(text) == expected


def test_the_decision_carries_it_and_the_usage_names_it() -> None:
    decision = dsl_decision("/session new pad --no-isolation")
    assert decision.command == {"verb": "new", "name": "pad", "text": NO_ISOLATION}
    assert "--no-isolation" in USAGE["new"]
