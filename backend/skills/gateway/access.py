"""What a caller may see and reach through the gateway, and what each session has seen.

``offered`` is the visibility rule: an op (or resource uri) appears in search
and listings only if the caller may run it (scopes, write permission) and it is
searchable, or hidden but unveiled for the caller's session (guidance naming an
op unveils it for that session only). ``describe``/``execute`` by exact name
reach any op the caller may run; their refusals (not found, denied, wrong
version) are built here so each verb words them alike.

Per session it keeps the unveiled ops and the ops the session has read help
for; :meth:`Access.forget` drops both when a session ends.
"""

from __future__ import annotations

import difflib

from backend.skills.envelopes import Envelope, ErrorCode, failure
from backend.skills.models import SkillContext, split_version
from backend.skills.registry import Registry
from backend.skills.search.bm25 import SkillIndex


class Access:
    def __init__(self, registry: Registry, index: SkillIndex) -> None:
        self.registry = registry
        self.index = index
        self._unveiled: dict[str, set[str]] = {}
        self._described: dict[str, set[str]] = {}
        # (scopes, can_write) -> key -> (allowed, searchable, op), for one registry version
        self._offer_memo: dict[tuple[frozenset[str], bool], dict[str, tuple[bool, bool, str]]] = {}
        self._offer_version = ""

    # -- per-session state --------------------------------------------------------------
    def unveil(self, session_id: str, ops: list[str]) -> None:
        self._unveiled.setdefault(session_id, set()).update(ops)

    def unveiled(self, session_id: str) -> frozenset[str]:
        return frozenset(self._unveiled.get(session_id, ()))

    def note_described(self, session_id: str, op: str) -> None:
        self._described.setdefault(session_id, set()).add(op)

    def described(self, session_id: str) -> frozenset[str]:
        """Ops the session has read help for (their search hits carry ``usage``)."""
        return frozenset(self._described.get(session_id, ()))

    def forget(self, session_id: str) -> None:
        self._unveiled.pop(session_id, None)
        self._described.pop(session_id, None)

    # -- visibility ---------------------------------------------------------------------
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

    def suggestions(self, name: str, ctx: SkillContext, limit: int = 5) -> list[str]:
        """Ops the caller may have meant: close spellings first, then BM25 on the name."""
        names = [s.op for s in self.registry if self.offered(s.op, ctx)]
        known = set(names)
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        ranked = self.index.search(name, limit=limit, include=known.__contains__)
        out = list(dict.fromkeys([*close, *(op for op, _ in ranked)]))
        return out[:limit]

    # -- refusals -----------------------------------------------------------------------
    def no_op(self, op: str, ctx: SkillContext, trace: str) -> Envelope:
        return failure(
            op, ErrorCode.NOT_FOUND, f"no op named {op!r}", trace_id=trace,
            help_path="search", suggestions=self.suggestions(op, ctx),
        )  # fmt: skip

    def denied(self, op: str, ctx: SkillContext, trace: str) -> Envelope:
        lacking = self.registry.missing(op, ctx)
        return failure(
            op,
            ErrorCode.ACCESS_DENIED,
            f"{ctx.agent} may not use {op}: lacks {', '.join(lacking)}",
            trace_id=trace,
            details={"missing": lacking},
            help_path=op,
        )

    def unversioned(self, name: str, ctx: SkillContext, trace: str) -> tuple[str, Envelope | None]:
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
            return op, self.denied(op, ctx, trace)
        if skill.version != version:
            return op, failure(
                name, ErrorCode.NOT_FOUND,
                f"{op} is at version {skill.version}, not {version}; its arguments may have "
                f"changed: describe {op!r} again", trace_id=trace, help_path=op,
                details={"reason": "version_mismatch", "current": skill.canonical_id},
                suggestions=[skill.canonical_id],
            )  # fmt: skip
        return op, None
