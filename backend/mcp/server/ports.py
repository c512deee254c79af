"""What the Sylk MCP server needs from the rest of the backend, as protocols.

:class:`GatewayPort` is what the server calls of the skill gateway
(``backend.skills.gateway.gateway.Gateway`` fits it). :class:`ResourceProvider`
is how knowledge sources (sessions now; the Librarian and Archivalist later)
publish MCP resources. The verbs' argument models (the MCP tools' input
schemas) live in :mod:`backend.skills.gateway.args`, shared with the agents' tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types
from pydantic import BaseModel, ConfigDict, Field

from backend.skills.gateway.batch import MAX_BATCH, BatchCall
from backend.skills.models import SkillContext


class GatewayPort(Protocol):
    """The verbs of :class:`backend.skills.gateway.gateway.Gateway`, as the server calls them.

    Each may be sync or async (the Gateway's search and describe are sync); each
    returns an ``Envelope`` or anything JSON-able. Errors users can cause come
    back as error envelopes or SylkErrors.
    """

    def search(
        self,
        ctx: SkillContext,
        query: str,
        domain: str | None = None,
        limit: int = 10,
        *,
        tags: Sequence[str] = (),
        per_domain: int | None = None,
        cursor: str | None = None,
    ) -> Any: ...

    def describe(
        self,
        ctx: SkillContext,
        path: str = "",
        level: str = "summary",
        *,
        if_none_match: str | None = None,
    ) -> Any: ...

    def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        dry_run: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Any: ...

    def batch(self, ctx: SkillContext, calls: list[Any]) -> Any: ...


@dataclass(frozen=True)
class ResourceBody:
    text: str
    mime_type: str = "application/json"


class ResourceProvider(Protocol):
    """A source of MCP resources. ``read`` answers None for a URI that is not its own."""

    async def list_resources(self) -> list[mcp_types.Resource]: ...

    def templates(self) -> list[mcp_types.ResourceTemplate]: ...

    async def read(self, uri: str) -> ResourceBody | None: ...


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BatchArgs(_Args):
    calls: list[BatchCall] = Field(
        min_length=1, max_length=MAX_BATCH, description="search/describe/execute calls"
    )
