"""``/budget``'s grammar: a session's token and cost limits, and its use against them.

    /budget                           use against the limits (the session's and each pipeline's)
    /budget session tokens 200000     a limit for this session (also: cost 2.50)
    /budget pipeline cost 0.50        a limit for each of this session's pipelines
    /budget session tokens none       lift that one limit
    /budget off                       no limits for this session (the config's neither)
    /budget on                        the config's limits again

Parsing checks the shape and the number; a bad line is :class:`BudgetUsageError`
naming the usage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from backend.errors import CommandError

BUDGET_USAGE = "/budget · /budget session|pipeline tokens|cost N|none · /budget off|on"
HELP_LINE = f"  {BUDGET_USAGE}   token and cost limits: use, set, lift"
HELP_TOPIC = (
    "Token and cost limits, checked before every model call:\n"
    "  /budget                          use against the limits, per session and pipeline\n"
    "  /budget session tokens 200000    limit this session's tokens (or: cost 2.50, in USD)\n"
    "  /budget pipeline tokens 50000    limit each pipeline (one plan task's run)\n"
    "  /budget session cost none        lift that limit\n"
    "  /budget off | on                 no limits for this session | the config's again\n"
    "At a limit the work pauses and asks: continue with a new limit, or stop.\n"
    "Defaults: [budgets] session_tokens, session_cost_usd, pipeline_tokens, pipeline_cost_usd."
)

BudgetAction = Literal["show", "set", "off", "on"]
_SCOPES = ("session", "pipeline")
_MEASURES = {"tokens": "tokens", "token": "tokens", "cost": "cost", "usd": "cost"}
_NONE = ("none", "off", "unlimited")


class BudgetUsageError(CommandError):
    """A ``/budget`` line that does not parse; names the usage."""

    def __init__(self, message: str) -> None:
        super().__init__(
            message,
            help_hint=BUDGET_USAGE,
            details={"reason": "budget_usage", "usage": BUDGET_USAGE},
        )


@dataclass(frozen=True)
class BudgetCommand:
    action: BudgetAction = "show"
    scope: str | None = None
    measure: str | None = None
    value: float | None = None  # None with "set": lift the limit

    def args(self) -> dict[str, str]:
        """The command as a route decision's arguments."""
        found = {"verb": "budget", "action": self.action}
        if self.scope is not None and self.measure is not None:
            found.update(scope=self.scope, measure=self.measure)
            found["value"] = "none" if self.value is None else repr(self.value)
        return found


def parse(words: list[str]) -> BudgetCommand:
    """``words`` is the whole line split, ``/budget`` first."""
    rest = [w.lower() for w in words[1:]]
    if not rest or rest == ["show"]:
        return BudgetCommand("show")
    if rest in (["off"], ["on"]):
        return BudgetCommand("off" if rest[0] == "off" else "on")
    if len(rest) != 3 or rest[0] not in _SCOPES or rest[1] not in _MEASURES:
        raise BudgetUsageError(f"/budget does not take {' '.join(words[1:])!r}")
    scope, measure = rest[0], _MEASURES[rest[1]]
    return BudgetCommand("set", scope, measure, parse_value(rest[2], measure))


def parse_value(text: str, measure: str) -> float | None:
    """A limit as typed: ``200000``, ``200,000``, ``200k``, ``1.5m``; ``2.50``, ``$2.50``."""
    if text in _NONE:
        return None
    raw = text.lstrip("$").replace(",", "").replace("_", "")
    scale = {"k": 1e3, "m": 1e6}.get(raw[-1:], 1.0) if measure == "tokens" else 1.0
    if scale != 1.0:
        raw = raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError:
        raise BudgetUsageError(f"{text!r} is not a {measure} limit") from None
    if not math.isfinite(value) or value <= 0:
        raise BudgetUsageError(f"a {measure} limit must be a positive number, not {text!r}")
    if measure == "tokens":
        if value != int(value) or value > 10**15:
            raise BudgetUsageError(f"a tokens limit is a whole number up to 10^15, not {text!r}")
        return float(int(value))
    if value > 1e9:
        raise BudgetUsageError(f"a cost limit is at most $1,000,000,000, not {text!r}")
    return value
