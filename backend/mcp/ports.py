"""What the Sylk MCP server needs from the rest of the backend, as protocols.

:class:`GatewayPort` is the shape the skill gateway (``backend/skills``) is
expected to have; the server calls nothing else of it. :class:`ResourceProvider`
is how knowledge sources (sessions now; the Librarian and Archivalist later)
publish MCP resources. The verb argument models define the MCP tools' input
schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types
from pydantic import BaseModel, ConfigDict, Field

from backend.skills.models import SkillContext

DetailLevel = Literal["summary", "schema", "full"]


class GatewayPort(Protocol):
    """The progressive-disclosure gateway's four verbs. Results are JSON-able
    (pydantic models, dataclasses, dicts); errors users can cause are SylkErrors."""

    async def search(self, ctx: SkillContext, query: str, *, limit: int = 10) -> Any: ...

    async def describe(
        self, ctx: SkillContext, op: str, *, detail: DetailLevel = "schema"
    ) -> Any: ...

    async def execute(
        self, ctx: SkillContext, op: str, args: dict[str, Any], *, dry_run: bool = False
    ) -> Any: ...

    async def batch(self, ctx: SkillContext, calls: list[dict[str, Any]]) -> Any: ...


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


class SearchArgs(_Args):
    """Find ops by what they do."""

    query: str = Field(min_length=1, description="words describing what you want to do")
    limit: int = Field(default=10, ge=1, le=50, description="at most this many results")


class DescribeArgs(_Args):
    op: str = Field(min_length=1, description="the op name, e.g. 'sessions.list'")
    detail: DetailLevel = Field(
        default="schema", description="summary: one line; schema: + parameters; full: + policy"
    )


class ExecuteArgs(_Args):
    op: str = Field(min_length=1, description="the op name, as found by search")
    args: dict[str, Any] = Field(default_factory=dict, description="the op's parameters")
    dry_run: bool = Field(default=False, description="validate and preview without acting")


class BatchArgs(_Args):
    calls: list[ExecuteArgs] = Field(
        min_length=1, max_length=20, description="execute calls, run in order"
    )
