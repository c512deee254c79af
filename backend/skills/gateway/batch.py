"""``batch``: several search/describe/execute calls in one round trip.

Calls run concurrently (``asyncio.gather``); results come back in the order
given; one call failing (bad shape, error envelope, even an exception) never
breaks the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.skills.envelopes import Envelope, ErrorCode, Meta, failure, new_trace_id
from backend.skills.gateway.args import MAX_LIMIT, DetailLevel
from backend.skills.models import SkillContext

MAX_BATCH = 25


class BatchCall(BaseModel):
    """One item: ``verb`` plus that verb's arguments (see :mod:`backend.skills.gateway.args`)."""

    model_config = ConfigDict(extra="forbid")
    verb: Literal["search", "describe", "execute"]
    op: str | None = Field(default=None, description="execute: the op; describe: op or prefix")
    path: str | None = Field(default=None, description="describe: same as op")
    args: dict[str, Any] = Field(default_factory=dict)
    dry_run: bool | None = None
    idempotency_key: str | None = None
    level: DetailLevel = "summary"
    if_none_match: str | None = None
    query: str | None = None
    domain: str | None = None
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)
    tags: list[str] = Field(default_factory=list)
    per_domain: int | None = Field(default=None, ge=1, le=MAX_LIMIT)
    cursor: str | None = None


class Verbs(Protocol):
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


def _trace(ctx: SkillContext) -> str:
    return ctx.trace_id or new_trace_id()


async def _one(verbs: Verbs, ctx: SkillContext, raw: Any) -> Envelope:
    try:
        call = BatchCall.model_validate(raw)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in exc.errors()
        ]
        return failure(
            "batch",
            ErrorCode.VALIDATION_ERROR,
            "invalid batch item",
            trace_id=_trace(ctx),
            details={"field_errors": errors},
            help_path="batch",
        )
    if call.verb == "search":
        return verbs.search(
            ctx, call.query or "", call.domain, call.limit,
            tags=call.tags, per_domain=call.per_domain, cursor=call.cursor,
        )  # fmt: skip
    if call.verb == "describe":
        path = call.op or call.path or ""
        return verbs.describe(ctx, path, call.level, if_none_match=call.if_none_match)
    if not call.op:
        return failure(
            "batch",
            ErrorCode.VALIDATION_ERROR,
            "execute needs an op",
            trace_id=_trace(ctx),
            details={"field_errors": [{"field": "op", "message": "Field required"}]},
            help_path="batch",
        )
    return await verbs.execute(
        ctx, call.op, call.args, dry_run=call.dry_run, idempotency_key=call.idempotency_key
    )


async def run_batch_items(verbs: Verbs, ctx: SkillContext, calls: list[Any]) -> list[Envelope]:
    outcomes = await asyncio.gather(
        *(_one(verbs, ctx, raw) for raw in calls), return_exceptions=True
    )
    envelopes: list[Envelope] = []
    for raw, outcome in zip(calls, outcomes, strict=True):
        if isinstance(outcome, Envelope):
            envelopes.append(outcome)
        elif isinstance(outcome, asyncio.CancelledError):
            raise outcome
        else:
            op, help_path = _blame(raw)
            envelopes.append(
                failure(
                    op,
                    ErrorCode.INTERNAL,
                    f"{type(outcome).__name__}: {outcome}",
                    trace_id=_trace(ctx),
                    details={"reason": type(outcome).__name__},
                    help_path=help_path,
                )
            )
    return envelopes


def _blame(raw: Any) -> tuple[str, str]:
    """The op an item that raised is reported under, and where its caller finds help.

    An execute points at its op's help so the caller can check what it sent; a
    search or describe at its verb; anything unreadable at ``batch``.
    """
    item = raw if isinstance(raw, dict) else {}
    op = item.get("op") or item.get("path")
    verb = item.get("verb")
    if verb == "execute" and isinstance(op, str) and op:
        return op, op
    if verb in ("search", "describe"):
        return str(op or verb), str(verb)
    return str(op or "batch"), "batch"


async def run_batch(verbs: Verbs, ctx: SkillContext, calls: list[Any]) -> Envelope:
    start = time.perf_counter()
    if len(calls) > MAX_BATCH:
        return failure(
            "batch",
            ErrorCode.VALIDATION_ERROR,
            f"a batch holds at most {MAX_BATCH} calls, got {len(calls)}",
            trace_id=_trace(ctx),
            details={"field_errors": [{"field": "calls", "message": "too many calls"}]},
            help_path="batch",
        )
    envelopes = await run_batch_items(verbs, ctx, calls)
    failed = sum(not e.ok for e in envelopes)
    result = {
        "results": [e.to_model() for e in envelopes],
        "summary": {"total": len(envelopes), "ok": len(envelopes) - failed, "failed": failed},
    }
    latency = round((time.perf_counter() - start) * 1000.0, 3)
    return Envelope(
        op="batch", ok=True, result=result, meta=Meta(trace_id=_trace(ctx), latency_ms=latency)
    )
