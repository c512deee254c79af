"""What the hub reports: server states, tools as ops, call results. No SDK imports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ServerState(StrEnum):
    IDLE = "idle"
    STARTING = "starting"
    UP = "up"
    DOWN = "down"
    CLOSED = "closed"
    DISABLED = "disabled"  # by the user (/mcp disable) or its config: not started


@dataclass(frozen=True)
class McpTool:
    """A tool one server offers, and the Sylk op it becomes."""

    server: str
    name: str  # the server's own name for it
    op: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    read_only: bool = False
    destructive: bool = False


@dataclass(frozen=True)
class McpCallResult:
    server: str
    tool: str
    text: str  # the text blocks, joined
    structured: Any  # the structured result, when the tool gave one
    content: list[dict[str, Any]]  # every content block, as JSON

    def value(self) -> Any:
        return self.text if self.structured is None else self.structured
