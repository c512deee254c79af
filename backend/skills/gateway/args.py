"""The arguments of the gateway verbs, as every caller sees them.

One definition serves the agents' tools (:mod:`backend.agents.gateway_tools`), the
MCP server's tools (:mod:`backend.mcp.server.server`) and each item of a ``batch``,
so a parameter added to a verb reaches all three at once; their JSON schemas
are what a model reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

DetailLevel = Literal["summary", "schema", "full"]
MAX_LIMIT = 50


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchArgs(_Args):
    query: str = Field(min_length=1, description="what you want to do, in a few words")
    domain: str | None = Field(
        default=None, description="only ops of this domain, e.g. 'librarian'"
    )
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)
    tags: list[str] = Field(
        default_factory=list, description="only ops carrying every one of these tags"
    )
    per_domain: int | None = Field(
        default=None, ge=1, le=MAX_LIMIT, description="at most this many hits per domain"
    )
    cursor: str | None = Field(
        default=None, description="next_cursor of the previous page of the same search"
    )


class DescribeArgs(_Args):
    op: str = Field(
        default="",
        validation_alias=AliasChoices("op", "path"),
        description="an op (or op@version), a group prefix ('librarian.code'), or '' for "
        "every domain",
    )
    level: DetailLevel = Field(
        default="summary", description="summary: one line; schema: + parameters; full: + policy"
    )
    if_none_match: str | None = Field(
        default=None, description="the etag of a page you hold: answers 'unchanged' if so"
    )


class ExecuteArgs(_Args):
    op: str = Field(min_length=1, description="the op to run, as found by search")
    args: dict[str, Any] = Field(default_factory=dict, description="the op's parameters")
    dry_run: bool | None = Field(default=None, description="destructive ops default to true")
    idempotency_key: str | None = Field(default=None, description="makes a write retry-safe")


__all__ = ["MAX_LIMIT", "DescribeArgs", "DetailLevel", "ExecuteArgs", "SearchArgs"]
