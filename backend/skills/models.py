"""What a skill is: an operation with a typed parameter model, an owner and a policy.

Skills are registered in the :class:`~backend.skills.registry.Registry`; a model
sees only its agent's core skills plus the gateway verbs (search, describe,
execute, batch) and reaches everything else through them. Hidden ops (every
external MCP tool, and ops meant to be reached only through guidance) never
appear in search until guidance unveils them for the caller's session.
"""

from __future__ import annotations

import copy
import re
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.config.approvals import ApprovalMode
from backend.sessions.ownership import SessionReach
from backend.workspace.confinement import Confinement

OP_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_-]*)+$")
VERSION_SEP = "@"
_VERSIONED = re.compile(r"^(?P<op>[^@\s]+)@(?P<version>\d+)$")


def split_version(name: str) -> tuple[str, int | None]:
    """``'a.b.c@2'`` -> ``('a.b.c', 2)``; a name without a version -> ``(name, None)``."""
    match = _VERSIONED.match(name.strip())
    if match is None:
        return name, None
    return match["op"], int(match["version"])


class SkillTier(StrEnum):
    CORE = "core"  # always in the agent's prompt
    CONTEXTUAL = "contextual"  # loaded while a trigger matches the conversation
    SPECIALISED = "specialised"  # only on explicit request


class OpKind(StrEnum):
    READ = "read"
    WRITE = "write"


# What a call does to the user's world, for the approval policy (backend.approvals):
# "edit" changes files in the workspace, "command" runs a process there (sandboxed when
# a sandbox exists), "external" acts outside Sylk's sandbox (an MCP server's tool).
# None: it changes only Sylk's own records (or nothing) and never needs approval.
Action = Literal["edit", "command", "external"]


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str
    args: dict[str, Any] = Field(default_factory=dict)


class Policy(BaseModel):
    """Compact usage policy shown at the ``full`` detail level."""

    model_config = ConfigDict(extra="forbid")
    do: list[str] = Field(default_factory=list)
    dont: list[str] = Field(default_factory=list)
    edge_cases: list[str] = Field(default_factory=list)


class Guidance(BaseModel):
    """A next step a result suggests; naming a hidden op unveils it for the session."""

    model_config = ConfigDict(extra="forbid")
    op: str
    prose: str
    args: dict[str, Any] = Field(default_factory=dict)


class SkillResult(BaseModel):
    """What a handler returns: the result and the guidance it gives (static or not)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    result: Any = None
    guidance: list[Guidance] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class OpBound(Protocol):
    """A bound on the ops one caller reaches beyond its scopes and write permission (an
    MCP client's token grant): ops outside it are neither offered to it nor run for it.
    Hashable, as the gateway remembers what each bound offers."""

    def allows_op(self, op: str) -> bool: ...

    def refusal(self, op: str) -> tuple[str, dict[str, Any]]:
        """The message and details of the ACCESS_DENIED for ``op`` outside the bound."""
        ...


@dataclass(frozen=True)
class SkillContext:
    """Who is calling, from where, with which rights."""

    session_id: str
    agent: str
    workspace: Path
    scopes: frozenset[str] = frozenset()
    can_write: bool = False
    trace_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # Sylk's own dirs (never touched) and the network switch for commands.
    confinement: Confinement = field(default_factory=Confinement)
    # The caller's approval mode when its rights fix one (an MCP client); None: the
    # session's. Set by the front end that builds the context, never by a model.
    approval: ApprovalMode | None = None
    # None: no bound beyond scopes and write permission. Set by the front end, as approval.
    op_bound: OpBound | None = None
    # Whose other sessions the cross-session scope reaches: the caller's user's only
    # (``backend.archive.team.ownership.TeamReach``). None: a single user's archive, every one.
    reach: SessionReach | None = None


Handler = Callable[[SkillContext, Any], Awaitable[SkillResult | Any]]
# Each params class's JSON schema, built once (weak: an MCP tool's class goes with its tool).
_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


class Skill(BaseModel):
    """One registered operation."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    op: str
    agent: str
    description: str
    params: type[BaseModel]
    handler: Handler
    kind: OpKind = OpKind.READ
    destructive: bool = False  # destructive ops default to dry_run
    action: Action | None = None  # what the approval policy weighs (see Action)
    # The handler honours ``ctx.extra["dry_run"]`` (it previews, never acts), so the gateway
    # calls it on a dry run; otherwise the gateway answers a dry run with a generic preview.
    supports_dry_run: bool = False
    # False for a placeholder whose capability is not built (or not wired) yet: its handler
    # fails honestly, the gateway never previews it and the agents never pin it as a tool.
    available: bool = True
    tier: SkillTier = SkillTier.SPECIALISED
    # Contextual skills: case-insensitive regexes matched against the conversation.
    triggers: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    # The agent roles (``SkillContext.agent``) that may see and run it; empty: every caller.
    # Others find it in no search or listing, and describe or execute it as ACCESS_DENIED.
    roles: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    notes: tuple[str, ...] = ()
    policy: Policy | None = None
    guidance: tuple[Guidance, ...] = ()  # static guidance added to every result
    searchable: bool = True  # False: hidden until guidance unveils it
    # An entry point leads into its domain (Ernesto's searchable routes): whenever a search
    # touches the domain it is listed first in the domain's group, whether it scored or not.
    entry_point: bool = False
    summary: str = ""  # one line for search results; the description's first sentence if empty
    # Bumped when the op's contract changes incompatibly, so a caller holding ``op@N``
    # from an older help page gets NOT_FOUND instead of running with the wrong arguments.
    version: int = Field(default=1, ge=1)

    @field_validator("op")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if not OP_NAME.match(value):
            raise ValueError(
                f"op {value!r} must be a dotted lowercase name such as 'librarian.code.search'"
            )
        return value

    @property
    def domain(self) -> str:
        return self.op.split(".", 1)[0]

    @property
    def canonical_id(self) -> str:
        return f"{self.op}{VERSION_SEP}{self.version}"

    def one_line(self) -> str:
        return self.summary or self.description.split(". ")[0].rstrip(".")

    def input_schema(self) -> dict[str, Any]:
        """The params' JSON schema (a fresh copy; built once per params class: every agent
        turn offers its tools' schemas, and pydantic builds one in about a millisecond)."""
        built = _SCHEMAS.get(self.params)
        if built is None:
            built = _SCHEMAS[self.params] = self.params.model_json_schema()
        return copy.deepcopy(built)
