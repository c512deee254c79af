"""The registry of ops (skills), their domains and the resources under them.

Scopes inherit down the tree, as in Ernesto: a domain's required scopes apply
to every op in it, an op adds its own, and a resource registered under an op
adds its own to the op's. :meth:`Registry.allowed` is true only if the caller
holds every effective scope; write ops also need ``ctx.can_write``.

``version`` is a hash over everything a help page shows (op names, schemas,
descriptions, scopes, tiers, examples, policies); it changes whenever any of
them does, so help caches keyed by it never serve a stale page.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from backend.errors import SylkError
from backend.skills.models import OpKind, Skill, SkillContext, SkillTier

GONE_KEPT = 1024  # gone names remembered, oldest forgotten first


class RegistryError(SylkError):
    """A registration or lookup in the skill registry failed."""


class DuplicateOpError(RegistryError):
    def __init__(self, op: str) -> None:
        super().__init__(
            f"op {op!r} is already registered", help_hint="unregister it first to replace it"
        )
        self.op = op


class UnknownOpError(RegistryError):
    def __init__(self, op: str) -> None:
        super().__init__(f"no op named {op!r}", help_hint="search for ops with `search`")
        self.op = op


class ExampleMismatchError(RegistryError):
    """An op's example does not validate against the op's own parameter model.

    Examples are what a model copies from ``describe(op, 'full')``; one that
    fails validation would teach it a call that is refused, so registration
    stops instead.
    """

    def __init__(self, op: str, example: str, problems: builtins.list[str]) -> None:
        super().__init__(
            f"op {op!r}: example {example!r} does not match its parameters: " + "; ".join(problems),
            help_hint="fix the example's args or the op's parameter model",
        )
        self.op = op
        self.example = example
        self.problems = problems


def builds_late(params: type[BaseModel]) -> bool:
    """True for a params model that defers its build (``defer_build``, as the builtin
    ops' do): the registry neither validates its examples nor reads its JSON schema at
    registration, which would build every such model at every start. The builtin
    catalogue's examples are checked by its tests instead."""
    return bool(params.model_config.get("defer_build")) and not params.__pydantic_complete__


def check_examples(skill: Skill) -> None:
    """Raise :class:`ExampleMismatchError` for the first example ``skill.params`` refuses."""
    for example in skill.examples:
        try:
            skill.params.model_validate(example.args)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in e['loc']) or '(args)'}: {e['msg']}"
                for e in exc.errors()
            ]
            raise ExampleMismatchError(skill.op, example.description, problems) from None


class Domain(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    description: str = ""
    scopes: tuple[str, ...] = ()


class Resource(BaseModel):
    """Indexed content addressed by a URI under an op (``<op>/<path>``); found by search."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    uri: str
    op: str  # the op that serves it (read it by executing the op with ``args``)
    name: str
    description: str = ""
    tags: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("uri")
    @classmethod
    def _under_op(cls, value: str) -> str:
        if "/" not in value:
            raise ValueError(f"resource uri {value!r} must look like '<op>/<path>'")
        return value

    @property
    def domain(self) -> str:
        return self.op.split(".", 1)[0]


@dataclass(frozen=True)
class RegistryChange:
    key: str  # op name or resource uri
    removed: bool
    skill: Skill | None = None
    resource: Resource | None = None


Listener = Callable[[RegistryChange], None]


def _params_digest(skill: Skill) -> Any:
    """What the params' JSON schema is made of, without building it for a model that
    defers its build: every field's annotation, default, constraints and description
    (``FieldInfo``'s repr) and the model's config. Deterministic for a given class, so the
    version does not move when the model is built later."""
    params = skill.params
    if not params.model_config.get("defer_build"):
        return skill.input_schema()
    fields = [(name, repr(info)) for name, info in params.model_fields.items()]
    return [f"{params.__module__}.{params.__qualname__}", fields, repr(params.model_config)]


def _skill_digest(skill: Skill) -> str:
    shown = {
        "op": skill.op,
        "agent": skill.agent,
        "description": skill.description,
        "summary": skill.summary,
        "schema": _params_digest(skill),
        "kind": skill.kind.value,
        "destructive": skill.destructive,
        "tier": skill.tier.value,
        "triggers": skill.triggers,
        "scopes": skill.scopes,
        "roles": skill.roles,
        "tags": skill.tags,
        "examples": [e.model_dump() for e in skill.examples],
        "notes": skill.notes,
        "policy": skill.policy.model_dump() if skill.policy else None,
        "guidance": [g.model_dump() for g in skill.guidance],
        "searchable": skill.searchable,
        "entry_point": skill.entry_point,
        "version": skill.version,
    }
    raw = json.dumps(shown, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()


class Registry:
    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._domains: dict[str, Domain] = {}
        self._resources: dict[str, Resource] = {}
        self._digests: dict[str, str] = {}
        self._version: str | None = None
        self._scope_cache: dict[str, frozenset[str]] = {}
        self._listeners: list[Listener] = []
        # Search asks for a domain's entry points on every query: worth a map, rebuilt lazily.
        self._entries: dict[str, builtins.list[Skill]] | None = None
        # Names that were ops (or domains) and are not now, with why: an external server
        # dropped a tool or was disabled. Bounded: a server may churn names forever.
        self._gone: dict[str, SylkError] = {}

    # -- changes ------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self, change: RegistryChange) -> None:
        self._version = None
        self._entries = None
        self._scope_cache.clear()
        for listener in list(self._listeners):
            listener(change)

    def define_domain(
        self, name: str, *, description: str = "", scopes: tuple[str, ...] = ()
    ) -> Domain:
        domain = Domain(name=name, description=description, scopes=tuple(scopes))
        self._domains[name] = domain
        self._version = None
        self._scope_cache.clear()
        return domain

    def register(self, skill: Skill) -> Skill:
        """Add ``skill``; raises :class:`DuplicateOpError` or :class:`ExampleMismatchError`."""
        if skill.op in self._skills:
            raise DuplicateOpError(skill.op)
        if skill.op in self._resources:
            raise DuplicateOpError(skill.op)
        if not builds_late(skill.params):
            check_examples(skill)
        self._skills[skill.op] = skill
        self._gone.pop(skill.op, None)
        self._gone.pop(skill.domain, None)
        self._changed(RegistryChange(skill.op, removed=False, skill=skill))
        return skill

    def register_all(self, skills: list[Skill]) -> None:
        for skill in skills:
            self.register(skill)

    def unregister(self, op: str) -> Skill:
        skill = self._skills.pop(op, None)
        if skill is None:
            raise UnknownOpError(op)
        self._digests.pop(op, None)
        self._changed(RegistryChange(op, removed=True, skill=skill))
        for uri in [r.uri for r in self._resources.values() if r.op == op]:
            self.remove_resource(uri)
        return skill

    def add_resource(self, resource: Resource) -> Resource:
        if resource.op not in self._skills:
            raise UnknownOpError(resource.op)
        if resource.uri in self._resources or resource.uri in self._skills:
            raise DuplicateOpError(resource.uri)
        self._resources[resource.uri] = resource
        self._changed(RegistryChange(resource.uri, removed=False, resource=resource))
        return resource

    def remove_resource(self, uri: str) -> Resource:
        resource = self._resources.pop(uri, None)
        if resource is None:
            raise UnknownOpError(uri)
        self._changed(RegistryChange(uri, removed=True, resource=resource))
        return resource

    def mark_gone(self, name: str, why: SylkError) -> None:
        """Remember why ``name`` (an op or domain that was registered) is gone, so a caller
        naming it hears that instead of a bare not-found; registering it again forgets."""
        self._gone.pop(name, None)
        self._gone[name] = why
        while len(self._gone) > GONE_KEPT:
            del self._gone[next(iter(self._gone))]

    def gone(self, name: str) -> SylkError | None:
        """Why ``name`` is no longer an op or domain, if it was one (see :meth:`mark_gone`)."""
        return None if name in self._skills else self._gone.get(name)

    # -- lookup -------------------------------------------------------------------------
    def __contains__(self, op: object) -> bool:
        return op in self._skills

    def __len__(self) -> int:
        return len(self._skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(list(self._skills.values()))

    def get(self, op: str) -> Skill | None:
        return self._skills.get(op)

    def require(self, op: str) -> Skill:
        skill = self._skills.get(op)
        if skill is None:
            raise UnknownOpError(op)
        return skill

    def resource(self, uri: str) -> Resource | None:
        return self._resources.get(uri)

    def resources(self, op: str | None = None) -> list[Resource]:
        return [r for r in self._resources.values() if op is None or r.op == op]

    def domain(self, name: str) -> Domain | None:
        return self._domains.get(name)

    def entry_points(self, domain: str) -> builtins.list[Skill]:
        """The domain's entry-point ops, in registration order."""
        if self._entries is None:
            entries: dict[str, builtins.list[Skill]] = {}
            for skill in self._skills.values():
                if skill.entry_point:
                    entries.setdefault(skill.domain, []).append(skill)
            self._entries = entries
        return list(self._entries.get(domain, ()))

    def domains(self) -> list[str]:
        return sorted({s.domain for s in self._skills.values()} | set(self._domains))

    def list(
        self,
        *,
        agent: str | None = None,
        tier: SkillTier | None = None,
        domain: str | None = None,
        prefix: str | None = None,
    ) -> list[Skill]:
        """Ops in registration order, filtered; ``prefix`` matches whole dotted segments."""
        out = []
        for skill in self._skills.values():
            if agent is not None and skill.agent != agent:
                continue
            if tier is not None and skill.tier != tier:
                continue
            if domain is not None and skill.domain != domain:
                continue
            if prefix and not (skill.op == prefix or skill.op.startswith(prefix + ".")):
                continue
            out.append(skill)
        return out

    @property
    def version(self) -> str:
        if self._version is None:
            for op, skill in self._skills.items():
                if op not in self._digests:
                    self._digests[op] = _skill_digest(skill)
            h = hashlib.sha256()
            for op in sorted(self._skills):
                h.update(self._digests[op].encode())
            for name in sorted(self._domains):
                h.update(self._domains[name].model_dump_json().encode())
            for uri in sorted(self._resources):
                h.update(self._resources[uri].model_dump_json().encode())
            self._version = h.hexdigest()[:16]
        return self._version

    # -- scopes -------------------------------------------------------------------------
    def effective_scopes(self, key: str) -> frozenset[str]:
        """Domain scopes + op scopes (+ resource scopes for a resource uri)."""
        cached = self._scope_cache.get(key)
        if cached is not None:
            return cached
        resource = self._resources.get(key)
        if resource is not None:
            scopes = self.effective_scopes(resource.op) | set(resource.scopes)
        else:
            skill = self.require(key)
            domain = self._domains.get(skill.domain)
            scopes = frozenset(skill.scopes) | frozenset(domain.scopes if domain else ())
        self._scope_cache[key] = scopes
        return scopes

    def allowed(self, key: str, ctx: SkillContext) -> bool:
        """True if the caller holds every effective scope (and may write, for write ops)."""
        if key not in self._skills and key not in self._resources:
            return False
        if not self.effective_scopes(key) <= ctx.scopes:
            return False
        resource = self._resources.get(key)
        skill = self._skills[resource.op if resource else key]
        return skill.kind is not OpKind.WRITE or ctx.can_write

    def missing(self, key: str, ctx: SkillContext) -> builtins.list[str]:
        """What the caller lacks for ``key``: scope names, plus 'write permission'."""
        lacking = sorted(self.effective_scopes(key) - ctx.scopes)
        resource = self._resources.get(key)
        skill = self._skills[resource.op if resource else key]
        if skill.kind is OpKind.WRITE and not ctx.can_write:
            lacking.append("write permission")
        return lacking
