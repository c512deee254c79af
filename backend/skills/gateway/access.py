"""What a caller may see and reach through the gateway, and what each session has seen.

``runnable`` is who may run an op (or read a resource): the caller holds its scopes
(and write permission for a write op), is one of the op's ``roles`` if it names
any, and the op is within the caller's bound (``SkillContext.op_bound``: an MCP
client's token grant) if it has one. ``offered`` is the visibility rule: an op
appears in search, listings and counts only if it is runnable for the caller and
searchable, or hidden but unveiled for the caller's session (guidance naming an
op unveils it for that session only), so nobody is shown what they may not run.
``describe``/``execute`` by exact name reach any runnable op; their refusals (not
found, denied, wrong version) are built here so each verb words them alike.

Per session it keeps the unveiled ops and the ops the session has read help
for; :meth:`Access.forget` drops both when a session ends.
"""

from __future__ import annotations

import difflib

from backend.skills.envelopes import Envelope, ErrorCode, code_for, failure
from backend.skills.models import Skill, SkillContext, split_version
from backend.skills.registry import Registry
from backend.skills.search.skill_index import SkillIndex


class Access:
    def __init__(self, registry: Registry, index: SkillIndex) -> None:
        self.registry = registry
        self.index = index
        self._unveiled: dict[str, set[str]] = {}
        self._described: dict[str, set[str]] = {}
        # what decides runnable -> key -> (runnable, searchable, op), for one registry version
        self._offer_memo: dict[tuple[object, ...], dict[str, tuple[bool, bool, str]]] = {}
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
    def _skill_of(self, key: str) -> Skill | None:
        resource = self.registry.resource(key)
        return self.registry.get(resource.op if resource else key)

    def runnable(self, key: str, ctx: SkillContext) -> bool:
        """May the caller run op ``key`` (or read resource ``key``)? See the module doc."""
        skill = self._skill_of(key)
        return (
            skill is not None
            and self.registry.allowed(key, ctx)
            and (not skill.roles or ctx.agent in skill.roles)
            and (ctx.op_bound is None or ctx.op_bound.allows_op(skill.op))
        )

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
        rights = (ctx.scopes, ctx.can_write, ctx.agent, ctx.op_bound)
        memo = self._offer_memo.setdefault(rights, {})
        known = memo.get(key)
        if known is None:
            skill = self._skill_of(key)
            op = skill.op if skill else key
            searchable = skill is not None and skill.searchable
            known = memo[key] = (self.runnable(key, ctx), searchable, op)
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
        gone = self.gone(op, ctx, trace)
        if gone is not None:
            return gone
        return failure(
            op, ErrorCode.NOT_FOUND, f"no op named {op!r}", trace_id=trace,
            help_path="search", suggestions=self.suggestions(op, ctx),
        )  # fmt: skip

    def gone(self, name: str, ctx: SkillContext, trace: str) -> Envelope | None:
        """The refusal for a name that was an op or domain and is gone (an external
        server dropped the tool, or was disabled), saying why; None for any other name."""
        why = self.registry.gone(name)
        if why is None:
            return None
        return failure(
            name, code_for(why), str(why), trace_id=trace, details=dict(why.details or {}),
            help_path="search", suggestions=self.suggestions(name, ctx),
        )  # fmt: skip

    def denied(self, op: str, ctx: SkillContext, trace: str) -> Envelope:
        """ACCESS_DENIED for an op (or resource) that is not :meth:`runnable`, saying why."""
        skill = self._skill_of(op)
        lacking = self.registry.missing(op, ctx) if skill is not None else []
        message = f"{ctx.agent} may not use {op}: lacks {', '.join(lacking)}"
        details: dict[str, object] = {"missing": lacking}
        if skill is None or lacking:
            pass
        elif skill.roles and ctx.agent not in skill.roles:
            roles = ", ".join(skill.roles)
            message = f"{ctx.agent} may not use {op}: it is offered only to {roles}"
            details = {"missing": [f"one of the roles {roles}"], "reason": "role",
                       "roles": list(skill.roles)}  # fmt: skip
        elif ctx.op_bound is not None:
            message, bound = ctx.op_bound.refusal(skill.op)
            details = {"missing": ["a grant reaching it"], "reason": "bound", **bound}
        return failure(
            op, ErrorCode.ACCESS_DENIED, message, trace_id=trace, details=details, help_path=op
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
        if not self.runnable(op, ctx):
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
