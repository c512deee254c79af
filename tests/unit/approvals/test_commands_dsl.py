"""/approval and /network: parsed by the Guide's DSL, routed as Guide commands."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing.dsl import SettingCommand, parse
from backend.guide.routing.router import dsl_decision


def test_approval_and_network_parse() -> None:
    assert parse("/approval") == SettingCommand("approval")
    assert parse("/approval Auto-Edit") == SettingCommand("approval", "auto-edit")
    assert parse("/approvals read-only") == SettingCommand("approval", "read-only")
    assert parse("/network on") == SettingCommand("network", "on")
    assert parse("/network") == SettingCommand("network")


@pytest.mark.parametrize("line", ["/approval yolo", "/approval ask now", "/network maybe"])
def test_bad_settings_say_what_is_accepted(line: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse(line)
    assert caught.value.help_hint in (
        "/approval [read-only|ask|auto-edit|auto]",
        "/network [on|off]",
    )


def test_they_route_to_the_guide() -> None:
    decision = dsl_decision("/approval auto")
    assert decision.target.value == "guide" and decision.tier == "dsl"
    assert decision.command == {"verb": "approval", "mode": "auto"}
    assert dsl_decision("/network off").command == {"verb": "network", "state": "off"}
