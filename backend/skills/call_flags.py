"""The per-call flags the gateway hands a skill handler in ``ctx.extra``.

Dry run. The gateway decides whether a call is a dry run (destructive ops
default to it; ``dry_run=False`` applies) and tells the handler through
``ctx.extra["dry_run"]`` (read it with :func:`is_dry_run`). A handler is only
*called* on a dry run if its skill declares ``supports_dry_run=True``
(:class:`~backend.skills.models.Skill`), a promise that it describes what it
would do and changes nothing. Any other handler is never called on a dry run:
the gateway answers with a generic preview (op, validated args, "call again
with dry_run=false") instead, so a handler that ignores the flag can never act
by accident.

Idempotency. The caller's ``idempotency_key`` (or None) rides along under
``ctx.extra["idempotency_key"]``.

Command output. A handler that runs a command passes
``ctx.extra.get(COMMAND_OUTPUT_KEY)`` to the runner as its ``on_output``: a plain
function ``(stream, chunk) -> None`` (stream ``"stdout"`` or ``"stderr"``, chunk the
decoded text as it arrives) that must return at once. The agent loop sets it, per
tool call, to a relay that shows the output live (``backend.agents.command_output``);
without it nothing is relayed.

Turn. An agent turn's calls share ``ctx.extra[TURN_KEY]`` (an id the turn runner sets
once per turn), so an op can tell a retry in the same turn from a new turn (the
Architect's plan gets one correction per turn); other callers have none.
"""

from __future__ import annotations

from backend.skills.models import SkillContext

DRY_RUN_KEY = "dry_run"
IDEMPOTENCY_KEY = "idempotency_key"
COMMAND_OUTPUT_KEY = "command_output"
TURN_KEY = "turn"


def is_dry_run(ctx: SkillContext) -> bool:
    return bool(ctx.extra.get(DRY_RUN_KEY, False))


def turn_of(ctx: SkillContext) -> str | None:
    """The agent turn making the call, or None for a caller outside a turn."""
    turn = ctx.extra.get(TURN_KEY)
    return turn if isinstance(turn, str) else None


__all__ = [
    "COMMAND_OUTPUT_KEY",
    "DRY_RUN_KEY",
    "IDEMPOTENCY_KEY",
    "TURN_KEY",
    "is_dry_run",
    "turn_of",
]
