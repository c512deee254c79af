"""``execute``: run one op and answer with an :class:`Envelope`.

Resolve the op, refuse it (ACCESS_DENIED) before anything runs if the caller
lacks a scope or write permission, decide the dry run (see
:mod:`backend.skills.call_flags`), honour the idempotency key, run the pre-tool
hooks (permission, validation, session scoping are always installed), call the
handler, collect guidance (static + conditional, unveiling what it names), run
the post-tool hooks, and map whatever the handler raised to an error envelope:
a validation error to VALIDATION_ERROR with field errors, a typed
:class:`~backend.errors.SylkError` to its kind's code (:func:`code_for`),
anything else to INTERNAL.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from backend.errors import SylkError
from backend.skills.call_flags import DRY_RUN_KEY, IDEMPOTENCY_KEY
from backend.skills.envelopes import (
    Envelope,
    ErrorCode,
    ErrorInfo,
    Meta,
    code_for,
    elapsed_ms,
    new_trace_id,
)
from backend.skills.gateway.access import Access
from backend.skills.gateway.idempotency import IdempotencyStore
from backend.skills.hooks.builtin import field_errors, validation_message
from backend.skills.hooks.registry import APPROVAL_NOTE, HookRegistry, ToolCallData
from backend.skills.models import Guidance, OpKind, Skill, SkillContext, SkillResult
from backend.skills.registry import Registry

log = logging.getLogger("sylk.skills")


class GatewayExecute:
    def __init__(
        self,
        registry: Registry,
        hooks: HookRegistry,
        access: Access,
        touch: Callable[[SkillContext, Skill], None],
        idempotency: IdempotencyStore,
    ) -> None:
        self.registry = registry
        self.hooks = hooks
        self.access = access
        self._touch = touch
        self.idempotency = idempotency

    async def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None,
        dry_run: bool | None,
        idempotency_key: str | None,
    ) -> Envelope:
        start = time.perf_counter()
        trace = ctx.trace_id or new_trace_id()
        op, refused = self.access.unversioned(op, ctx, trace)
        if refused is not None:
            return refused
        skill = self.registry.get(op)
        if skill is None:
            return self.access.no_op(op, ctx, trace)
        if not self.access.runnable(op, ctx):
            return self.access.denied(op, ctx, trace)
        self._touch(ctx, skill)
        args = dict(args or {})
        dry = skill.kind is OpKind.WRITE and (skill.destructive if dry_run is None else dry_run)
        call_ctx = dataclasses.replace(
            ctx,
            trace_id=trace,
            extra={**ctx.extra, DRY_RUN_KEY: dry, IDEMPOTENCY_KEY: idempotency_key},
        )

        async def run() -> Envelope:
            return await self._run(skill, call_ctx, args, dry, start)

        if idempotency_key and not dry:
            return await self.idempotency.run(
                ctx.session_id, idempotency_key, op=op, args=args, trace_id=trace, call=run
            )
        return await run()

    async def _run(
        self, skill: Skill, ctx: SkillContext, args: dict[str, Any], dry: bool, start: float
    ) -> Envelope:
        data = ToolCallData(skill=skill, ctx=ctx, args=args, dry_run=dry)
        try:
            data = await self.hooks.run_pre_tool(data)
            if data.params is None:  # validation hook removed: validate anyway
                data.params = skill.params.model_validate(data.args)
            # A pre-tool hook may have narrowed the context (the session's network switch).
            result = await self._call(skill, data.ctx, data.params, dry)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            data.error = self._error_info(skill.op, exc, data.args)
        else:
            data.result = result
        data.latency_ms = elapsed_ms(start)
        data = await self.hooks.run_post_tool(data)
        meta = Meta(trace_id=ctx.trace_id, latency_ms=elapsed_ms(start))
        if skill.kind is OpKind.WRITE:
            meta.dry_run = dry
        meta.warnings.extend(data.warnings)
        meta.approval = data.annotations.pop(APPROVAL_NOTE, None)
        if data.annotations:
            meta.warnings.extend(f"{k}: {v}" for k, v in data.annotations.items())
        if data.error is not None or data.result is None:
            return Envelope(op=skill.op, ok=False, error=data.error, meta=meta)
        meta.warnings[:0] = data.result.warnings
        guidance = self._guidance(skill, data.result, ctx)
        return Envelope(
            op=skill.op, ok=True, result=data.result.result, guidance=guidance, meta=meta
        )

    async def _call(
        self, skill: Skill, ctx: SkillContext, params: BaseModel, dry: bool
    ) -> SkillResult:
        # A not-available op just says so; any other handler runs on a dry run only if it
        # previews: otherwise the gateway answers with a generic preview itself.
        if dry and skill.available and not skill.supports_dry_run:
            return SkillResult(
                result={
                    "dry_run": True,
                    "would_execute": skill.op,
                    "args": params.model_dump(mode="json"),
                    "apply_with": {"op": skill.op, "dry_run": False},
                },
                warnings=["dry run: nothing was changed; call again with dry_run=false"],
            )
        out = await skill.handler(ctx, params)
        return out if isinstance(out, SkillResult) else SkillResult(result=out)

    def _error_info(self, op: str, exc: Exception, args: dict[str, Any] | None = None) -> ErrorInfo:
        if isinstance(exc, ValidationError):
            skill = self.registry.get(op)
            found = field_errors(exc, skill.params if skill else None, args)
            errors = [e.model_dump() for e in found]
            return ErrorInfo(
                code=ErrorCode.VALIDATION_ERROR,
                message=validation_message(op, found),
                details={"field_errors": errors},
                help_path=op,
            )
        if isinstance(exc, SylkError):
            details = exc.details if exc.details is not None else {"reason": exc.failure_word()}
            return ErrorInfo(
                code=code_for(exc), message=str(exc), details=details, help_path=exc.help_path or op
            )
        log.exception("skill %s failed", op, exc_info=exc)
        reason = type(exc).__name__
        return ErrorInfo(
            code=ErrorCode.INTERNAL, message=str(exc), details={"reason": reason}, help_path=op
        )

    def _guidance(self, skill: Skill, result: SkillResult, ctx: SkillContext) -> list[Guidance]:
        """Static + conditional guidance the caller may follow; naming an op unveils it.

        One entry per op: a handler's (conditional) entry replaces the static one.
        """
        kept: dict[str, Guidance] = {}
        for item in [*skill.guidance, *result.guidance]:
            if self.access.runnable(item.op, ctx):
                kept.pop(item.op, None)
                kept[item.op] = item
        self.access.unveil(ctx.session_id, list(kept))
        return list(kept.values())
