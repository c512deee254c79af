"""A session's limits: its own (``/budget``, kept in its metadata) over the config's.

Why in the session's metadata: it is stored with the session, so a limit set from any
front end survives a restart, and it belongs to that session alone. ``/budget off``
keeps ``{"off": true}``: no limit at all for the session, the config's included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.config.budgets import BudgetLimits, BudgetMeasure, BudgetScope

BUDGET_KEY = "budget"  # the session metadata key
_FIELDS = tuple(BudgetLimits.model_fields)


def effective_limits(configured: BudgetLimits, metadata: Mapping[str, Any]) -> BudgetLimits:
    """The limits that hold for a session with ``metadata``."""
    own = metadata.get(BUDGET_KEY)
    if not isinstance(own, Mapping):
        return configured
    if own.get("off"):
        return BudgetLimits()
    merged = configured.model_dump()
    merged.update({k: v for k, v in own.items() if k in _FIELDS})
    try:
        return BudgetLimits.model_validate(merged)
    except ValueError:  # a hand-edited archive: the config's limits still hold
        return configured


def with_limit(
    metadata: Mapping[str, Any], scope: BudgetScope, measure: BudgetMeasure, value: float | None
) -> dict[str, Any]:
    """The session's ``budget`` metadata with one limit set (None: none for it)."""
    own = metadata.get(BUDGET_KEY)
    kept = {k: v for k, v in own.items() if k in _FIELDS} if isinstance(own, Mapping) else {}
    kept[BudgetLimits.key(scope, measure)] = int(value) if measure == "tokens" and value else value
    return kept


def without_limits() -> dict[str, Any]:
    """The ``budget`` metadata of ``/budget off``."""
    return {"off": True}


def is_off(metadata: Mapping[str, Any]) -> bool:
    own = metadata.get(BUDGET_KEY)
    return isinstance(own, Mapping) and bool(own.get("off"))
