"""Conventions between the gateway and skill handlers.

Dry run. The gateway decides whether a call is a dry run (destructive ops
default to it; ``dry_run=False`` applies) and tells the handler through
``ctx.extra["dry_run"]`` (read it with :func:`is_dry_run`). A handler is only
*called* on a dry run if it is marked with :func:`supports_dry_run`, which
promises it will describe what it would do and change nothing. An unmarked
handler is never called on a dry run: the gateway answers with a generic
preview (op, validated args, "call again with dry_run=false") instead, so a
handler that ignores the flag can never act by accident.

Not available. Ops whose capability lives in a part of Sylk that is not built
yet are registered with :func:`not_available`, which fails with a typed
INTERNAL error (``details.reason = "not_available"``) naming that part. They
never return made-up data.
"""

from __future__ import annotations

from typing import Any, TypeVar

from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Handler, SkillContext

DRY_RUN_KEY = "dry_run"
IDEMPOTENCY_KEY = "idempotency_key"
_MARK = "__sylk_supports_dry_run__"
_UNAVAILABLE = "__sylk_not_available__"

F = TypeVar("F")


def supports_dry_run(handler: F) -> F:
    """Mark a handler as honouring ``ctx.extra['dry_run']`` (it previews, never acts)."""
    setattr(handler, _MARK, True)
    return handler


def handler_supports_dry_run(handler: Any) -> bool:
    return bool(getattr(handler, _MARK, False))


def is_dry_run(ctx: SkillContext) -> bool:
    return bool(ctx.extra.get(DRY_RUN_KEY, False))


class NotAvailableError(SkillError):
    def __init__(
        self, op: str, provider: str, detail: str = "", *, status: str = "which is not built yet"
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


def not_available(
    op: str, provider: str, detail: str = "", *, status: str = "which is not built yet"
) -> Handler:
    """A handler that honestly fails: ``provider`` names the part of Sylk that will serve it."""

    async def handler(ctx: SkillContext, params: Any) -> Any:
        raise NotAvailableError(op, provider, detail, status=status)

    handler.__name__ = f"not_available_{op.replace('.', '_')}"
    setattr(handler, _UNAVAILABLE, provider)
    return handler


def is_not_available(handler: Any) -> bool:
    """True for handlers made by :func:`not_available` (the executor does not pin them)."""
    return getattr(handler, _UNAVAILABLE, None) is not None
