"""How knowledge sources publish MCP resources to the Sylk MCP server.

:class:`ResourceProvider` is what a source (sessions, the fragment library,
registry resources) implements; :class:`ResourceBody` is what it reads back.
What the server calls of the skill gateway is :class:`backend.skills.gateway.verbs.Verbs`,
and the verbs' argument models (the MCP tools' input schemas) live there too,
shared with the agents' tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import mcp_types


@dataclass(frozen=True)
class ResourceBody:
    text: str
    mime_type: str = "application/json"


class ResourceProvider(Protocol):
    """A source of MCP resources. ``read`` answers None for a URI that is not its own."""

    async def list_resources(self) -> list[mcp_types.Resource]: ...

    def templates(self) -> list[mcp_types.ResourceTemplate]: ...

    async def read(self, uri: str) -> ResourceBody | None: ...
