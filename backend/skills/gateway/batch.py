"""``batch``: several search/describe/execute calls in one round trip.

Calls run concurrently (``asyncio.gather``); results come back in the order
given; one call failing (bad shape, error envelope, even an exception) never
breaks the others. With ``chain`` they run in order instead, a step may use an
earlier step's result and the first failure stops the chain
(:mod:`backend.skills.gateway.chain`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import TypeAdapter, ValidationError

from backend.skills.envelopes import Envelope, ErrorCode, Meta, failure, new_trace_id
from backend.skills.gateway.chain import forward_problems, run_chain
from backend.skills.gateway.verbs import MAX_BATCH, BatchCall, Verbs, call_verb, unresolved_ref
from backend.skills.models import SkillContext

_ITEM: TypeAdapter[BatchCall] = TypeAdapter(BatchCall)
_VERB_TAGS = ("union_tag_invalid", "union_tag_not_found")


def _trace(ctx: SkillContext) -> str:
    return ctx.trace_id or new_trace_id()


def _field(error: Any) -> str:
    """The field an item's validation error is about, without the verb's union tag."""
    if error["type"] in _VERB_TAGS:
        return "verb"
    loc = error["loc"][1:] if error["loc"] else ()
    return ".".join(map(str, loc))


def _invalid(ctx: SkillContext, message: str, field_errors: list[dict[str, str]]) -> Envelope:
    """The batch's own VALIDATION_ERROR, its field errors naming what to fix."""
    return failure(
        "batch",
        ErrorCode.VALIDATION_ERROR,
        message,
        trace_id=_trace(ctx),
        details={"field_errors": field_errors},
        help_path="batch",
    )


async def _one(verbs: Verbs, ctx: SkillContext, raw: Any) -> Envelope:
    try:
        call = _ITEM.validate_python(raw)
    except ValidationError as exc:
        errors = [{"field": _field(e), "message": e["msg"]} for e in exc.errors()]
        return _invalid(ctx, "invalid batch item", errors)
    if (field := unresolved_ref(call)) is not None:
        message = 'a {"$ref": ...} is followed only in a chain: send the batch with chain=true'
        return _invalid(ctx, message, [{"field": field, "message": message}])
    return await call_verb(verbs, ctx, call)


def _raised(ctx: SkillContext, raw: Any, exc: BaseException) -> Envelope:
    op, help_path = _blame(raw)
    return failure(
        op,
        ErrorCode.INTERNAL,
        f"{type(exc).__name__}: {exc}",
        trace_id=_trace(ctx),
        details={"reason": type(exc).__name__},
        help_path=help_path,
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
            envelopes.append(_raised(ctx, raw, outcome))
    return envelopes


async def _chain_step(verbs: Verbs, ctx: SkillContext, raw: Any) -> Envelope:
    try:
        return await _one(verbs, ctx, raw)
    except Exception as exc:
        return _raised(ctx, raw, exc)


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


async def run_batch(
    verbs: Verbs, ctx: SkillContext, calls: list[Any], *, chain: bool = False
) -> Envelope:
    start = time.perf_counter()
    if len(calls) > MAX_BATCH:
        too_many = f"a batch holds at most {MAX_BATCH} calls, got {len(calls)}"
        return _invalid(ctx, too_many, [{"field": "calls", "message": "too many calls"}])
    stopped: dict[str, Any] = {}
    if not chain:
        envelopes = await run_batch_items(verbs, ctx, calls)
    elif problems := forward_problems(calls):
        unreachable = "a chain step refers to a result it cannot have; nothing was run"
        return _invalid(ctx, unreachable, problems)
    else:
        envelopes, stopped = await run_chain(
            calls, lambda raw: _chain_step(verbs, ctx, raw), _trace(ctx)
        )
    failed = sum(not e.ok for e in envelopes)
    summary = {"total": len(calls), "ok": len(envelopes) - failed, "failed": failed}
    if chain:
        summary["not_run"] = len(calls) - len(envelopes)
    result = {"results": [e.to_model() for e in envelopes], "summary": summary, **stopped}
    meta = Meta(trace_id=_trace(ctx), latency_ms=round((time.perf_counter() - start) * 1000.0, 3))
    if stopped:
        last = envelopes[-1]
        reason = last.error.message if last.error else "failed"
        meta.warnings.append(
            f"chain stopped at step {stopped['stopped_at']} ({last.op}): {reason}; "
            f"{len(stopped['not_run'])} step(s) not run"
        )
    return Envelope(op="batch", ok=True, result=result, meta=meta)
