"""``/mcp``: the external MCP servers Sylk aggregates, and switching them on and off.

    /mcp                    each server and its health (up, starting, down and why, disabled)
    /mcp enable NAME        start it (in the background) and keep it on across restarts
    /mcp disable NAME       stop it, remove its ops, and keep it off across restarts
    /mcp refresh [NAME]     list its tools (or every server's) again and say what changed

Parsing checks the shape only; whether a server of that name is configured is the
engine's to say (an unknown name lists the configured ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.errors import CommandError

MCP_USAGE = "/mcp · /mcp enable|disable NAME · /mcp refresh [NAME]"
HELP_LINE = f"  {MCP_USAGE}   external MCP servers: health, on/off, re-list tools"
HELP_TOPIC = (
    "The external MCP servers whose tools agents use:\n"
    "  /mcp                  each server: up with N tools, starting, down and why, or disabled\n"
    "  /mcp enable NAME      start it in the background; its tools join once listed\n"
    "  /mcp disable NAME     stop it (its whole process group) and remove its ops\n"
    "  /mcp refresh [NAME]   list its tools again and say what was added, removed, changed\n"
    "Enabling and disabling are kept across restarts (over the config's enabled)."
)

McpAction = Literal["list", "enable", "disable", "refresh"]


@dataclass(frozen=True)
class McpCommand:
    action: McpAction = "list"
    server: str | None = None

    def args(self) -> dict[str, str]:
        """The command as a route decision's arguments."""
        found = {"verb": "mcp", "action": self.action}
        if self.server is not None:
            found["server"] = self.server
        return found


def parse(words: list[str]) -> McpCommand:
    """``words`` is the whole line split, ``/mcp`` first."""
    rest = words[1:]
    action = rest[0].lower() if rest else "list"
    if action in ("list", "status") and len(rest) <= 1:
        return McpCommand("list")
    if action == "refresh" and len(rest) <= 2:
        return McpCommand("refresh", rest[1] if len(rest) == 2 else None)
    if action in ("enable", "disable"):
        if len(rest) != 2:
            raise CommandError(f"/mcp {action} needs one server name", help_hint=MCP_USAGE)
        return McpCommand("enable" if action == "enable" else "disable", rest[1])
    raise CommandError(f"/mcp does not take {' '.join(rest)!r}", help_hint=MCP_USAGE)
