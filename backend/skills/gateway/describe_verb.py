"""``describe``: help for an op (``op`` or ``op@N``), a resource or a group prefix.

Pages come from :mod:`backend.skills.gateway.help` and are kept in a small LRU
per registry version. ``meta.etag`` fingerprints the page; a caller that sends
it back as ``if_none_match`` while the page is unchanged gets
``{unchanged: true}`` instead of the whole page again. Describing an op by
exact name is an explicit request: it loads a contextual or specialised op into
the session's tool list (``touch``) and marks it as read for the session.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

from backend.skills.envelopes import Envelope, ErrorCode, Meta, elapsed_ms, failure, new_trace_id
from backend.skills.gateway.access import Access
from backend.skills.gateway.help import LEVELS, directory_doc, op_doc, resource_doc, root_doc
from backend.skills.models import Skill, SkillContext
from backend.skills.registry import Registry

HELP_CACHE_SIZE = 512


def etag_of(doc: dict[str, Any]) -> str:
    raw = json.dumps(doc, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


class GatewayDescribe:
    def __init__(
        self,
        registry: Registry,
        access: Access,
        touch: Callable[[SkillContext, Skill], None],
    ) -> None:
        self.registry = registry
        self.access = access
        self._touch = touch
        self._help: OrderedDict[tuple[Any, ...], tuple[dict[str, Any], str]] = OrderedDict()

    def describe(
        self, ctx: SkillContext, path: str, level: str, if_none_match: str | None
    ) -> Envelope:
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
        path, refused = self.access.unversioned(path, ctx, trace)
        if refused is not None:
            return refused
        skill = self.registry.get(path)
        resource = self.registry.resource(path) if skill is None else None
        if (skill or resource) and not self.access.runnable(path, ctx):
            return self.access.denied(path, ctx, trace)
        if skill is not None:
            self._touch(ctx, skill)
            self.access.note_described(ctx.session_id, skill.op)
            key: tuple[Any, ...] = (self.registry.version, path, level)
            cached, doc, etag = self._cached(key, lambda: op_doc(skill, level, self.registry))
        elif resource is not None:
            doc = resource_doc(resource)
            cached, etag = False, etag_of(doc)
        else:
            visible = [
                s for s in self.registry.list(prefix=path or None) if self.access.offered(s.op, ctx)
            ]
            if not visible:
                return self.access.gone(path, ctx, trace) or failure(
                    path,
                    ErrorCode.NOT_FOUND,
                    f"nothing named {path!r}: no op, resource or group",
                    trace_id=trace,
                    help_path="",
                    suggestions=self.access.suggestions(path, ctx),
                    latency_ms=elapsed_ms(start),
                )
            ops = tuple(s.op for s in visible)
            key = (self.registry.version, path, level, ops)
            if path:
                cached, doc, etag = self._cached(key, lambda: directory_doc(path, visible, level))
            else:
                counts = dict(Counter(s.domain for s in visible))
                cached, doc, etag = self._cached(key, lambda: root_doc(self.registry, counts))
        meta = Meta(trace_id=trace, latency_ms=elapsed_ms(start), cached=cached, etag=etag)
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
        etag = etag_of(doc)
        self._help[key] = (doc, etag)
        while len(self._help) > HELP_CACHE_SIZE:
            self._help.popitem(last=False)
        return False, doc, etag
