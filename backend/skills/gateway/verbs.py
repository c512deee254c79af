"""The gateway verbs, declared once: their arguments, their signatures, and the call.

* The argument models (:class:`SearchArgs`, :class:`DescribeArgs`,
  :class:`ExecuteArgs`, :class:`BatchArgs`, and :data:`BatchCall` for one item
  of a batch) are what every caller sees: the agents' tools
  (:mod:`backend.agents.gateway_tools`), the MCP server's tools
  (:mod:`backend.mcp.server.server`) and each item of a ``batch``. Their JSON
  schemas are what a model reads.
* :class:`Verbs` is the Python signature of the verbs:
  :class:`~backend.skills.gateway.gateway.Gateway` implements it; batch, the MCP
  server and the agents' tools call through it.
* :func:`call_verb` is the one mapping from a verb's arguments to its call.

A parameter added to a verb is one edit here (model, signature, call) plus the
implementation in the gateway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from backend.skills.envelopes import Envelope
from backend.skills.models import SkillContext

DetailLevel = Literal["summary", "schema", "full"]
MAX_LIMIT = 50
MAX_BATCH = 25


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


class StepRef(_Args):
    """In a chain, a value of an earlier step's reply (``{"$ref": "0.result.hits.0.op"}``);
    it is replaced before the step runs (:mod:`backend.skills.gateway.chain`)."""

    ref: str = Field(alias="$ref", description="N.path: step N's reply, dotted")


_FROM_STEP = 'or, in a chain, {"$ref": "N.path"} for an earlier step\'s value'
_Text = Annotated[str, Field(min_length=1)]


class SearchCall(SearchArgs):
    verb: Literal["search"]
    query: _Text | StepRef = Field(  # type: ignore[assignment]
        description=f"what you want to do, in a few words; {_FROM_STEP}"
    )


class DescribeCall(DescribeArgs):
    verb: Literal["describe"]
    op: str | StepRef = Field(  # type: ignore[assignment]
        default="",
        validation_alias=AliasChoices("op", "path"),
        description=f"an op, a group prefix, or '' for every domain; {_FROM_STEP}",
    )


class ExecuteCall(ExecuteArgs):
    verb: Literal["execute"]
    op: _Text | StepRef = Field(  # type: ignore[assignment]
        description=f"the op to run, as found by search; {_FROM_STEP}"
    )


def unresolved_ref(call: SearchCall | DescribeCall | ExecuteCall) -> str | None:
    """The field still holding a reference once a step is due (None: none does)."""
    for name in ("query", "op"):
        if isinstance(getattr(call, name, None), StepRef):
            return name
    return None


BatchCall = Annotated[SearchCall | DescribeCall | ExecuteCall, Field(discriminator="verb")]
"""One item of a batch: ``verb`` plus that verb's arguments."""


CHAIN_HELP = (
    "false (default): the calls run at once, each on its own. true: they run in order as "
    'steps, a step\'s op, query or args may hold {"$ref": "N.path"} for a value of step '
    'N\'s reply (e.g. "0.result.hits.0.op"; N before this step; dotted keys, numbers '
    "index lists), and the first failing step stops the chain: the reply has the steps "
    "run, stopped_at and not_run"
)


class BatchArgs(_Args):
    calls: list[BatchCall] = Field(
        min_length=1, max_length=MAX_BATCH, description="search/describe/execute calls"
    )
    chain: bool = Field(default=False, description=CHAIN_HELP)


VerbArgs = SearchArgs | DescribeArgs | ExecuteArgs


class Verbs(Protocol):
    """The verbs a caller reaches the skills through; each answers with an :class:`Envelope`
    (an error envelope for anything the caller can fix)."""

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
    ) -> Envelope: ...

    def describe(
        self,
        ctx: SkillContext,
        path: str = "",
        level: str = "summary",
        *,
        if_none_match: str | None = None,
    ) -> Envelope: ...

    async def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        dry_run: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Envelope: ...

    async def batch(self, ctx: SkillContext, calls: list[Any], *, chain: bool = False) -> Envelope:
        """``calls`` are raw :data:`BatchCall` items; each is validated on its own. With
        ``chain`` they run in order as steps (:mod:`backend.skills.gateway.chain`)."""
        ...


async def call_verb(verbs: Verbs, ctx: SkillContext, a: VerbArgs) -> Envelope:
    """Call the verb whose arguments ``a`` holds."""
    if isinstance(a, SearchArgs):
        return verbs.search(
            ctx, a.query, a.domain, a.limit, tags=a.tags, per_domain=a.per_domain, cursor=a.cursor
        )
    if isinstance(a, DescribeArgs):
        return verbs.describe(ctx, a.op, a.level, if_none_match=a.if_none_match)
    return await verbs.execute(
        ctx, a.op, a.args, dry_run=a.dry_run, idempotency_key=a.idempotency_key
    )


__all__ = [
    "CHAIN_HELP",
    "MAX_BATCH",
    "MAX_LIMIT",
    "BatchArgs",
    "BatchCall",
    "DescribeArgs",
    "DetailLevel",
    "ExecuteArgs",
    "SearchArgs",
    "StepRef",
    "VerbArgs",
    "Verbs",
    "call_verb",
    "unresolved_ref",
]
