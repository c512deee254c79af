"""``/model``: which provider and model each agent role uses in this session.

    /model                         each role's provider/model, and why
    /model PROVIDER[/MODEL]        every role of this session
    /model ROLE PROVIDER[/MODEL]   one role
    /model reset [ROLE]            back to the config (one role, or all)

Parsing only checks the shape and the role's name; whether the provider exists
and can be called is the engine's to say when the choice is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.errors import CommandError
from backend.roles import AGENT_ROLES

MODEL_USAGE = "/model · /model [ROLE] PROVIDER[/MODEL] · /model reset [ROLE]"
HELP_LINE = f"  {MODEL_USAGE}   which model each agent uses in this session"
HELP_TOPIC = (
    "Which provider and model each agent role uses in this session:\n"
    "  /model                        each role's provider/model, and why\n"
    "  /model PROVIDER[/MODEL]       every role (e.g. /model local/qwen2.5-coder)\n"
    "  /model ROLE PROVIDER[/MODEL]  one role (roles: " + ", ".join(AGENT_ROLES) + ")\n"
    "  /model reset [ROLE]           back to the config\n"
    "Kept with the session; sylk run --provider/--model still wins for that run."
)


@dataclass(frozen=True)
class ModelCommand:
    action: Literal["show", "set", "reset"]
    role: str | None = None  # None: every role
    spec: str | None = None  # PROVIDER[/MODEL], for "set"

    def args(self) -> dict[str, str]:
        """The command as a route decision's arguments."""
        found = {"verb": "model", "action": self.action}
        if self.role is not None:
            found["role"] = self.role
        if self.spec is not None:
            found["spec"] = self.spec
        return found


def _role(word: str) -> str:
    role = word.lower()
    if role not in AGENT_ROLES:
        raise CommandError(
            f"unknown agent role {word!r}", help_hint="roles are " + ", ".join(AGENT_ROLES)
        )
    return role


def parse(words: list[str]) -> ModelCommand:
    """``words`` is the whole command, ``/model`` first."""
    rest = words[1:]
    if not rest:
        return ModelCommand("show")
    if rest[0].lower() == "reset":
        if len(rest) > 2:
            raise CommandError("/model reset takes at most one role", help_hint=MODEL_USAGE)
        return ModelCommand("reset", _role(rest[1]) if len(rest) == 2 else None)
    if len(rest) == 1:
        if rest[0].lower() in AGENT_ROLES:
            raise CommandError(
                f"/model {rest[0]} needs the provider and model to use", help_hint=MODEL_USAGE
            )
        return ModelCommand("set", None, rest[0])
    if len(rest) == 2:
        return ModelCommand("set", _role(rest[0]), rest[1])
    raise CommandError("/model takes a role and PROVIDER/MODEL at most", help_hint=MODEL_USAGE)
