"""A compact way to declare builtin skills, and the parameter models they share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.skills.handlers import not_available
from backend.skills.models import (
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
    model_config = ConfigDict(extra="forbid")


class NoParams(Params):
    pass


class TextParams(Params):
    text: str = Field(min_length=1)


class SessionScoped(Params):
    session_id: str | None = Field(default=None, description="filled in with your session")


def declare(
    op: str,
    agent: str,
    description: str,
    params: type[BaseModel] = NoParams,
    handler: Handler | None = None,
    *,
    provider: str = "",
    status: str = "which is not built yet",
    kind: OpKind = READ,
    destructive: bool = False,
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
    """One skill; without a handler it gets an honest not-available one naming ``provider``."""
    if handler is None:
        if not provider:
            raise ValueError(f"{op}: give a handler or name the part of Sylk that provides it")
        handler = not_available(op, provider, status=status)
    return Skill(
        op=op,
        agent=agent,
        description=description,
        params=params,
        handler=handler,
        kind=kind,
        destructive=destructive,
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
