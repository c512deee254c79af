"""The skill gateway: the verbs a model sees (search, describe, execute, batch).

:class:`Gateway` implements :class:`~backend.skills.gateway.verbs.Verbs` and
holds what the verbs share: the registry, the hooks, the search index, the
context tracker and the per-session state (what each session unveiled, read
help for, and the idempotency keys it used), which :meth:`Gateway.forget_session`
drops when the session ends. Each verb's work lives in its own module:

* ``search``: :mod:`backend.skills.gateway.search_verb`
* ``describe``: :mod:`backend.skills.gateway.describe_verb`
* ``execute``: :mod:`backend.skills.gateway.execute_verb`
* ``batch``: :mod:`backend.skills.gateway.batch`
* visibility and refusals: :mod:`backend.skills.gateway.access`

Visibility. ``search`` and directory views offer an op only if the caller may
run it and it is searchable, or hidden but unveiled for the caller's session.
``describe``/``execute`` by exact name reach any op the caller may run (hidden
or not), as Ernesto's ``get`` does; that is an explicit request, so it also
loads a contextual or specialised op into the session's tool list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from backend.skills.envelopes import (
    Envelope,
    ErrorCode,
    Meta,
    SearchHit,
    elapsed_ms,
    failure,
    new_trace_id,
)
from backend.skills.gateway.access import Access
from backend.skills.gateway.batch import run_batch
from backend.skills.gateway.contextual import ContextTracker
from backend.skills.gateway.describe_verb import GatewayDescribe
from backend.skills.gateway.execute_verb import GatewayExecute
from backend.skills.gateway.idempotency import IdempotencyStore
from backend.skills.gateway.search_verb import CursorError, GatewaySearch, SearchRequest
from backend.skills.hooks.builtin import core_tool_hooks
from backend.skills.hooks.registry import HookRegistry
from backend.skills.models import Skill, SkillContext, SkillTier
from backend.skills.registry import Registry
from backend.skills.search.bm25 import BM25Config
from backend.skills.search.embedding import EmbeddingStage
from backend.skills.search.skill_index import SkillIndex


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
        self.access = Access(registry, self.index)
        self._idempotency = IdempotencyStore(idempotency_capacity)
        self._forget_listeners: list[Callable[[str], None]] = []
        self._refreshers: list[Callable[[], None]] = []
        self._search = GatewaySearch(registry, self.index, self.offered, self.described)
        self._describe = GatewayDescribe(registry, self.access, self._touch)
        self._execute = GatewayExecute(
            registry, self.hooks, self.access, self._touch, self._idempotency
        )

    # -- visibility and per-session state -----------------------------------------------
    def unveil(self, session_id: str, ops: list[str]) -> None:
        self.access.unveil(session_id, ops)

    def unveiled(self, session_id: str) -> frozenset[str]:
        return self.access.unveiled(session_id)

    def offered(self, key: str, ctx: SkillContext) -> bool:
        """May ``key`` (op or resource uri) appear in this caller's search and listings?"""
        return self.access.offered(key, ctx)

    def described(self, session_id: str) -> frozenset[str]:
        """Ops the session has read help for (their search hits carry ``usage``)."""
        return self.access.described(session_id)

    def suggestions(self, name: str, ctx: SkillContext, limit: int = 5) -> list[str]:
        """Ops the caller may have meant: close spellings first, then BM25 on the name."""
        return self.access.suggestions(name, ctx, limit)

    def forget_session(self, session_id: str) -> None:
        self.access.forget(session_id)
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
        if self.registry.get(op) is None:
            return self.access.no_op(op, ctx, trace)
        if not self.access.runnable(op, ctx):
            return self.access.denied(op, ctx, trace)
        loaded = bool(self.tracker and self.tracker.load(ctx.session_id, ctx.agent, op))
        return Envelope(op=op, ok=True, result={"loaded": loaded}, meta=Meta(trace_id=trace))

    def add_refresher(self, refresh: Callable[[], None]) -> None:
        """Run ``refresh`` before each search and describe (e.g. to apply a source's
        pending resource changes on the gateway's own thread)."""
        self._refreshers.append(refresh)

    def _refresh(self) -> None:
        for refresh in self._refreshers:
            refresh()

    # -- the verbs ----------------------------------------------------------------------
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
                help_path="search", latency_ms=elapsed_ms(start),
            )  # fmt: skip
        meta = Meta(trace_id=trace, latency_ms=elapsed_ms(start), warnings=page.warnings)
        result: dict[str, Any] = {"query": query, "hits": page.hits}
        if page.entry_points:
            result["entry_points"] = page.entry_points
        result["domains"] = page.domains
        if page.next_cursor:
            result["next_cursor"] = page.next_cursor
        if not page.hits:
            meta.warnings.append("no ops matched; try other words or describe('') for domains")
        return Envelope(op="search", ok=True, result=result, meta=meta)

    def find(self, ctx: SkillContext, query: str, **options: Any) -> list[SearchHit]:
        """The ranked hits of :meth:`search`'s page (``options`` as for search)."""
        found = self.search(ctx, query, **options)
        if not found.ok:
            raise ValueError(found.error.message if found.error else "search failed")
        return [SearchHit.model_validate(hit) for hit in found.result["hits"]]

    def describe(
        self,
        ctx: SkillContext,
        path: str = "",
        level: str = "summary",
        *,
        if_none_match: str | None = None,
    ) -> Envelope:
        """Help for an op (``op`` or ``op@N``), a resource or a group prefix; see
        :mod:`backend.skills.gateway.describe_verb`."""
        self._refresh()
        return self._describe.describe(ctx, path, level, if_none_match)

    async def execute(
        self,
        ctx: SkillContext,
        op: str,
        args: dict[str, Any] | None = None,
        *,
        dry_run: bool | None = None,
        idempotency_key: str | None = None,
    ) -> Envelope:
        """Run ``op``; see :mod:`backend.skills.gateway.execute_verb`."""
        return await self._execute.execute(ctx, op, args, dry_run, idempotency_key)

    async def batch(self, ctx: SkillContext, calls: list[Any], *, chain: bool = False) -> Envelope:
        """``[{verb: "search"|"describe"|"execute", ...}]`` run concurrently, results in
        order; with ``chain``, in order as steps that may use earlier results, stopping at
        the first failure (:mod:`backend.skills.gateway.chain`)."""
        return await run_batch(self, ctx, calls, chain=chain)


__all__ = ["Gateway"]
