"""The verbs a model sees: search, describe, execute, batch.

Visibility. ``search`` and directory views offer an op only if the caller may
run it (scopes, write permission) and it is searchable, or hidden but
unveiled for the caller's session: guidance naming an op unveils it for that
session only. ``describe``/``execute`` by exact name reach any op the caller
may run (hidden or not), as Ernesto's ``get`` does; that is an explicit
request, so it also loads a contextual or specialised op into the session's
tool list.

Execution. Resolve the op, refuse it (ACCESS_DENIED) before anything runs if
the caller lacks a scope or write permission, decide the dry run (see
:mod:`backend.skills.handlers`), honour the idempotency key, run the pre-tool
hooks (permission, validation, session scoping are always installed), call the
handler, collect guidance (static + conditional, unveiling what it names), run
the post-tool hooks, and return an :class:`Envelope`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import hashlib
import json
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from backend.errors import SylkError
from backend.skills.envelopes import (
    Envelope,
    ErrorCode,
    ErrorInfo,
    Meta,
    SearchHit,
    code_for,
    failure,
    new_trace_id,
)
from backend.skills.gateway.batch import run_batch
from backend.skills.gateway.contextual import ContextTracker
from backend.skills.gateway.help import LEVELS, directory_doc, op_doc, resource_doc, root_doc
from backend.skills.gateway.idempotency import IdempotencyStore
from backend.skills.gateway.search_verb import CursorError, GatewaySearch, SearchRequest
from backend.skills.handlers import (
    DRY_RUN_KEY,
    IDEMPOTENCY_KEY,
    handler_supports_dry_run,
    is_not_available,
)
from backend.skills.hooks.builtin import core_tool_hooks, field_errors, validation_message
from backend.skills.hooks.registry import HookRegistry, Rejection, ToolCallData
from backend.skills.models import (
    Guidance,
    OpKind,
    Skill,
    SkillContext,
    SkillResult,
    SkillTier,
    split_version,
)
from backend.skills.registry import Registry
from backend.skills.search.bm25 import BM25Config, SkillIndex
from backend.skills.search.embedding import EmbeddingStage

log = logging.getLogger("sylk.skills")
HELP_CACHE_SIZE = 512


class Gateway:
    def __init__(
        self,
        registry: Registry,
        hooks: HookRegistry | None = None,
        *,
        context_tracker: ContextTracker | None = None,
        search_config: BM25Config | None = None,
        idempotency_capacity: int = 256,
        embedding: EmbeddingStage | None = None,
    ) -> None:
        self.registry = registry
        self.hooks = hooks if hooks is not None else HookRegistry()
        for hook in core_tool_hooks(registry):
            self.hooks.install(hook)
        self.tracker = context_tracker
        self.index = SkillIndex(registry, search_config, embedding=embedding)
        self._unveiled: dict[str, set[str]] = {}
        # (scopes, can_write) -> key -> (allowed, searchable, op), for one registry version
        self._offer_memo: dict[tuple[frozenset[str], bool], dict[str, tuple[bool, bool, str]]] = {}
        self._offer_version = ""
        self._forget_listeners: list[Callable[[str], None]] = []
        self._help: OrderedDict[tuple[Any, ...], tuple[dict[str, Any], str]] = OrderedDict()
        self._idempotency = IdempotencyStore(idempotency_capacity)
        self._described: dict[str, set[str]] = {}
        self._refreshers: list[Callable[[], None]] = []
        self._search = GatewaySearch(registry, self.index, self.offered, self.described)

    # -- visibility ---------------------------------------------------------------------
    def unveil(self, session_id: str, ops: list[str]) -> None:
        self._unveiled.setdefault(session_id, set()).update(ops)

    def unveiled(self, session_id: str) -> frozenset[str]:
        return frozenset(self._unveiled.get(session_id, ()))

    def offered(self, key: str, ctx: SkillContext) -> bool:
        """May ``key`` (op or resource uri) appear in this caller's search and listings?

        Search asks this of every candidate it scores (dozens per query), so what
        depends only on the registry and the caller's rights is remembered per
        registry version; whether the session unveiled a hidden op is looked up fresh.
        """
        version = self.registry.version
        if version != self._offer_version:
            self._offer_memo.clear()
            self._offer_version = version
        memo = self._offer_memo.setdefault((ctx.scopes, ctx.can_write), {})
        known = memo.get(key)
        if known is None:
            resource = self.registry.resource(key)
            op = resource.op if resource else key
            skill = self.registry.get(op)
            allowed = skill is not None and self.registry.allowed(key, ctx)
            known = memo[key] = (allowed, skill is not None and skill.searchable, op)
        allowed, searchable, op = known
        return allowed and (searchable or op in self._unveiled.get(ctx.session_id, ()))

    def forget_session(self, session_id: str) -> None:
        self._unveiled.pop(session_id, None)
        self._described.pop(session_id, None)
        self._idempotency.forget(session_id)
        if self.tracker:
            self.tracker.forget(session_id)
        for listener in list(self._forget_listeners):
            listener(session_id)

    def on_forget_session(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` when a session's state is dropped (it ended)."""
        self._forget_listeners.append(listener)

    def _touch(self, ctx: SkillContext, skill: Skill) -> None:
        if self.tracker and skill.tier is not SkillTier.CORE:
            self.tracker.load(ctx.session_id, ctx.agent, skill.op)

    def load(self, ctx: SkillContext, op: str) -> Envelope:
        """Explicitly load a contextual or specialised op into the caller's tool list."""
        trace = ctx.trace_id or new_trace_id()
        skill = self.registry.get(op)
        if skill is None:
            return failure(
                op, ErrorCode.NOT_FOUND, f"no op named {op!r}", trace_id=trace,
                help_path="search", suggestions=self.suggestions(op, ctx),
            )  # fmt: skip
        if not self.registry.allowed(op, ctx):
            return self._denied(op, ctx, trace)
        loaded = bool(self.tracker and self.tracker.load(ctx.session_id, ctx.agent, op))
        return Envelope(op=op, ok=True, result={"loaded": loaded}, meta=Meta(trace_id=trace))

    def suggestions(self, name: str, ctx: SkillContext, limit: int = 5) -> list[str]:
        """Ops the caller may have meant: close spellings first, then BM25 on the name."""
        names = [s.op for s in self.registry if self.offered(s.op, ctx)]
        known = set(names)
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        ranked = self.index.search(name, limit=limit, include=known.__contains__)
        out = list(dict.fromkeys([*close, *(op for op, _ in ranked)]))
        return out[:limit]

    # -- search -------------------------------------------------------------------------
    def add_refresher(self, refresh: Callable[[], None]) -> None:
        """Run ``refresh`` before each search and describe (e.g. to apply a source's
        pending resource changes on the gateway's own thread)."""
        self._refreshers.append(refresh)

    def _refresh(self) -> None:
        for refresh in self._refreshers:
            refresh()

    def described(self, session_id: str) -> frozenset[str]:
        """Ops the session has read help for (their search hits carry ``usage``)."""
        return frozenset(self._described.get(session_id, ()))

    def find(
        self,
        ctx: SkillContext,
        query: str,
        *,
        domain: str | None = None,
        limit: int = 10,
        tags: Sequence[str] = (),
        per_domain: int | None = None,
    ) -> list[SearchHit]:
        """The flat ranked hits of the first page (see :meth:`search`)."""
        request = SearchRequest(query, domain, limit, tuple(tags), per_domain)
        self._refresh()
        return [SearchHit.model_validate(h) for h in self._search.page(ctx, request).hits]

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
    ) -> Envelope:
        """Ranked ``hits``, the touched ``domains`` with their descriptions, their
        ``entry_points`` that did not score, and ``next_cursor`` when there are more;
        see :mod:`backend.skills.gateway.search_verb`."""
        start = time.perf_counter()
        trace = ctx.trace_id or new_trace_id()
        request = SearchRequest(query, domain, limit, tuple(tags), per_domain, cursor)
        self._refresh()
        try:
            page = self._search.page(ctx, request)
        except CursorError as exc:
            return failure(
                "search", ErrorCode.VALIDATION_ERROR, str(exc), trace_id=trace,
                details={"field_errors": [{"field": "cursor", "message": exc.reason}]},
                help_path="search", latency_ms=_since(start),
            )  # fmt: skip
        meta = Meta(trace_id=trace, latency_ms=_since(start), warnings=page.warnings)
        result: dict[str, Any] = {"query": query, "hits": page.hits}
        if page.entry_points:
            result["entry_points"] = page.entry_points
        result["domains"] = page.domains
        if page.next_cursor:
            result["next_cursor"] = page.next_cursor
        if not page.hits:
            meta.warnings.append("no ops matched; try other words or describe('') for domains")
        return Envelope(op="search", ok=True, result=result, meta=meta)

    # -- describe -----------------------------------------------------------------------
    def describe(
        self,
        ctx: SkillContext,
        path: str = "",
        level: str = "summary",
        *,
        if_none_match: str | None = None,
    ) -> Envelope:
        """Help for an op (``op`` or ``op@N``), a resource or a group prefix.

        ``meta.etag`` fingerprints the page; a caller that sends it back as
        ``if_none_match`` while the page is unchanged gets ``{unchanged: true}``
        instead of the whole page again.
        """
        start = time.perf_counter()
        trace = ctx.trace_id or new_trace_id()
        path = path.strip().strip(".")
        if path == "root":
            path = ""
        if level not in LEVELS:
            return failure(
                path or "describe",
                ErrorCode.VALIDATION_ERROR,
                f"level must be one of {', '.join(LEVELS)}",
                trace_id=trace,
                details={"field_errors": [{"field": "level", "message": "unknown level"}]},
                help_path="describe",
            )
        self._refresh()
        path, refused = self._unversioned(path, ctx, trace)
        if refused is not None:
            return refused
        skill = self.registry.get(path)
        resource = self.registry.resource(path) if skill is None else None
        if (skill or resource) and not self.registry.allowed(path, ctx):
            return self._denied(path, ctx, trace)
        if skill is not None:
            self._touch(ctx, skill)
            self._described.setdefault(ctx.session_id, set()).add(skill.op)
            key: tuple[Any, ...] = (self.registry.version, path, level)
            cached, doc, etag = self._cached(key, lambda: op_doc(skill, level, self.registry))
        elif resource is not None:
            doc = resource_doc(resource)
            cached, etag = False, _etag(doc)
        else:
            visible = [
                s for s in self.registry.list(prefix=path or None) if self.offered(s.op, ctx)
            ]
            if not visible:
                return failure(
                    path,
                    ErrorCode.NOT_FOUND,
                    f"nothing named {path!r}: no op, resource or group",
                    trace_id=trace,
                    help_path="",
                    suggestions=self.suggestions(path, ctx),
                    latency_ms=_since(start),
                )
            ops = tuple(s.op for s in visible)
            key = (self.registry.version, path, level, ops)
            if path:
                cached, doc, etag = self._cached(key, lambda: directory_doc(path, visible, level))
            else:
                counts = dict(Counter(s.domain for s in visible))
                cached, doc, etag = self._cached(key, lambda: root_doc(self.registry, counts))
        meta = Meta(trace_id=trace, latency_ms=_since(start), cached=cached, etag=etag)
        meta.registry_version = self.registry.version
        if if_none_match is not None and if_none_match == etag:
            doc = {"path": path, "unchanged": True}
        return Envelope(op=path, ok=True, result=doc, meta=meta)

    def _cached(
        self, key: tuple[Any, ...], build: Callable[[], dict[str, Any]]
    ) -> tuple[bool, dict[str, Any], str]:
        """``(served from cache, page, etag)``."""
        hit = self._help.get(key)
        if hit is not None:
            self._help.move_to_end(key)
            return True, hit[0], hit[1]
        doc = build()
        etag = _etag(doc)
        self._help[key] = (doc, etag)
        while len(self._help) > HELP_CACHE_SIZE:
            self._help.popitem(last=False)
        return False, doc, etag

    def _unversioned(self, name: str, ctx: SkillContext, trace: str) -> tuple[str, Envelope | None]:
        """``op@N`` -> ``op`` if the op is at version N; otherwise a refusal.

        A name that is itself an op or resource is left alone, so a resource URI
        that happens to end in ``@<digits>`` still resolves.
        """
        if name in self.registry or self.registry.resource(name) is not None:
            return name, None
        op, version = split_version(name)
        skill = self.registry.get(op) if version is not None else None
        if skill is None:
            return op, None
        if not self.registry.allowed(op, ctx):
            return op, self._denied(op, ctx, trace)
        if skill.version != version:
            return op, failure(
                name, ErrorCode.NOT_FOUND,
                f"{op} is at version {skill.version}, not {version}; its arguments may have "
                f"changed: describe {op!r} again", trace_id=trace, help_path=op,
                details={"reason": "version_mismatch", "current": skill.canonical_id},
                suggestions=[skill.canonical_id],
            )  # fmt: skip
        return op, None

    def _denied(self, op: str, ctx: SkillContext, trace: str) -> Envelope:
        lacking = self.registry.missing(op, ctx)
        return failure(
            op,
            ErrorCode.ACCESS_DENIED,
            f"{ctx.agent} may not use {op}: lacks {', '.join(lacking)}",
            trace_id=trace,
            details={"missing": lacking},
            help_path=op,
        )

    # -- batch --------------------------------------------------------------------------
    async def batch(self, ctx: SkillContext, calls: list[Any]) -> Envelope:
        """``[{verb: "search"|"describe"|"execute", ...}]`` run concurrently, results in order."""
        return await run_batch(self, ctx, calls)

    # -- execute ------------------------------------------------------------------------
    async def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        dry_run: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Envelope:
        start = time.perf_counter()
        trace = ctx.trace_id or new_trace_id()
        op, refused = self._unversioned(op, ctx, trace)
        if refused is not None:
            return refused
        skill = self.registry.get(op)
        if skill is None:
            return failure(
                op,
                ErrorCode.NOT_FOUND,
                f"no op named {op!r}",
                trace_id=trace,
                help_path="search",
                suggestions=self.suggestions(op, ctx),
            )
        if not self.registry.allowed(op, ctx):
            return self._denied(op, ctx, trace)
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
            return await self._idempotency.run(
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
            result = await self._call(skill, ctx, data.params, dry)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            data.error = self._error_info(skill.op, exc, data.args)
        else:
            data.result = result
        data.latency_ms = _since(start)
        data = await self.hooks.run_post_tool(data)
        meta = Meta(trace_id=ctx.trace_id, latency_ms=_since(start))
        if skill.kind is OpKind.WRITE:
            meta.dry_run = dry
        meta.warnings.extend(data.warnings)
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
        acts = not is_not_available(skill.handler)  # a not-available handler just says so
        if dry and acts and not handler_supports_dry_run(skill.handler):
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
            if self.registry.allowed(item.op, ctx):
                kept.pop(item.op, None)
                kept[item.op] = item
        self.unveil(ctx.session_id, list(kept))
        return list(kept.values())


def _etag(doc: dict[str, Any]) -> str:
    raw = json.dumps(doc, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def _since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


__all__ = ["Gateway", "Rejection", "new_trace_id"]
