"""/mcp's grammar: list, enable/disable NAME, refresh [NAME]; malformed lines are typed errors."""

from __future__ import annotations

import pytest

from backend.errors import CommandError
from backend.guide.routing import dsl
from backend.guide.routing.decision import Target
from backend.guide.routing.mcp_dsl import McpCommand
from backend.guide.routing.router import dsl_decision


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("/mcp", McpCommand("list")),
        ("/mcp list", McpCommand("list")),
        ("/mcp enable github", McpCommand("enable", "github")),
        ("/mcp Disable GitHub", McpCommand("disable", "GitHub")),  # the name as written
        ("/mcp refresh", McpCommand("refresh")),
        ("/mcp refresh echo", McpCommand("refresh", "echo")),
    ],
)
def test_mcp_lines_parse(line: str, command: McpCommand) -> None:
    assert dsl.parse(line) == command


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("/mcp enable", "needs one server name"),
        ("/mcp disable a b", "needs one server name"),
        ("/mcp restart echo", "does not take 'restart echo'"),
        ("/mcp refresh a b", "does not take"),
    ],
)
def test_malformed_mcp_lines_say_what_is_wrong(line: str, fragment: str) -> None:
    with pytest.raises(CommandError, match=fragment) as info:
        dsl.parse(line)
    assert "/mcp enable|disable NAME" in info.value.help_hint


def test_an_mcp_line_is_the_guides_own_command() -> None:
    decision = dsl_decision("/mcp disable echo")
    assert decision.target is Target.GUIDE and decision.tier == "dsl"
    assert decision.command == {"verb": "mcp", "action": "disable", "server": "echo"}
    assert "/mcp" in dsl.help_text(None) and "/mcp refresh" in dsl.help_text("mcp")
