"""A compact way to declare builtin skills, and the parameter models they share.

Not available. Ops whose capability lives in a part of Sylk that is not built
(or not wired) yet are declared with :class:`Unbuilt` in place of a handler, or
with just ``provider=``. The skill gets ``available=False`` and a handler that
fails with :class:`NotAvailableError`, a typed INTERNAL error
(``details.reason = "not_available"``) naming that part. Such ops never return
made-up data.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import (
    Action,
    Example,
    Guidance,
    Handler,
    OpKind,
    Policy,
    Skill,
    SkillContext,
    SkillTier,
)

CORE, CONTEXTUAL, SPECIALISED = SkillTier.CORE, SkillTier.CONTEXTUAL, SkillTier.SPECIALISED
READ, WRITE = OpKind.READ, OpKind.WRITE


class Params(BaseModel):
    # Built on first use (a call, a describe, an example checked), not when the catalogue
    # is imported: an engine declares dozens of ops and a run uses a handful of them. The
    # registry fingerprints such a model by its fields, never building it at start.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class NoParams(Params):
    pass


class TextParams(Params):
    text: str = Field(min_length=1)


class SessionScoped(Params):
    session_id: str | None = Field(default=None, description="filled in with your session")


# Every op has a real handler now; one declared without it is served by a part that only
# an engine builds and wires (a bare gateway, e.g. in a unit test, lacks it).
NOT_BUILT = "which is not wired into this gateway (an engine wires it in)"


class NotAvailableError(SkillError):
    def __init__(
        self, op: str, provider: str, detail: str = "", *, status: str = NOT_BUILT
    ) -> None:
        message = f"{op} is not available: it is provided by {provider}, {status}"
        if detail:
            message = f"{message}. {detail}"
        super().__init__(
            ErrorCode.INTERNAL,
            message,
            details={"reason": "not_available", "provided_by": provider},
            help_path=op,
        )


@dataclass(frozen=True)
class Unbuilt:
    """In place of a handler: ``provider`` (the part of Sylk that will serve the op) is
    ``status`` (not built, not wired), so calling the op fails honestly."""

    provider: str
    status: str = NOT_BUILT


def _not_available(op: str, unbuilt: Unbuilt) -> Handler:
    async def handler(ctx: SkillContext, params: Any) -> Any:
        raise NotAvailableError(op, unbuilt.provider, status=unbuilt.status)

    handler.__name__ = f"not_available_{op.replace('.', '_')}"
    return handler


def declare(
    op: str,
    agent: str,
    description: str,
    params: type[BaseModel] = NoParams,
    handler: Handler | Unbuilt | None = None,
    *,
    provider: str = "",
    status: str = NOT_BUILT,
    kind: OpKind = READ,
    destructive: bool = False,
    action: Action | None = None,
    supports_dry_run: bool = False,
    tier: SkillTier = SPECIALISED,
    triggers: Sequence[str] = (),
    scopes: Sequence[str] = (),
    tags: Sequence[str] = (),
    examples: Sequence[tuple[str, dict[str, Any]]] = (),
    notes: Sequence[str] = (),
    policy: Policy | None = None,
    guidance: Sequence[tuple[str, str]] = (),
    searchable: bool = True,
    entry_point: bool = False,
) -> Skill:
    """One skill; without a handler (or with :class:`Unbuilt`) it is not available and
    gets an honest handler naming ``provider``."""
    if handler is None:
        if not provider:
            raise ValueError(f"{op}: give a handler or name the part of Sylk that provides it")
        handler = Unbuilt(provider, status)
    available = not isinstance(handler, Unbuilt)
    if isinstance(handler, Unbuilt):
        handler = _not_available(op, handler)
    return Skill(
        op=op,
        agent=agent,
        description=description,
        params=params,
        handler=handler,
        kind=kind,
        destructive=destructive,
        action=action,
        supports_dry_run=supports_dry_run,
        available=available,
        tier=tier,
        triggers=tuple(triggers),
        scopes=tuple(scopes),
        tags=tuple(tags),
        examples=tuple(Example(description=d, args=a) for d, a in examples),
        notes=tuple(notes),
        policy=policy,
        guidance=tuple(Guidance(op=o, prose=p) for o, p in guidance),
        searchable=searchable,
        entry_point=entry_point,
    )


AnyCallable = Callable[..., Any | Awaitable[Any]]


def calling(fn: AnyCallable, *fields: str) -> Handler:
    """A handler that calls ``fn(*[params.<field>])`` (sync or async) and returns its value."""

    async def handler(ctx: SkillContext, params: Any) -> Any:
        out = fn(*(getattr(params, f) for f in fields))
        if isinstance(out, Awaitable):
            out = await out
        if isinstance(out, BaseModel):
            return out.model_dump(mode="json")
        return out

    handler.__name__ = getattr(fn, "__name__", "wired")
    return handler
