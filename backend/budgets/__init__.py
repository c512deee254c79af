"""Budgets: token and cost limits per session and per pipeline, checked before each
model call (the seed's ``token_budget_check``).

Reaching a limit pauses the call and asks the user (continue with a new limit, or
stop); the call waits for the answer, so nothing fails silently and nothing goes on
silently. ``limits`` reads a session's limits (its own over the config's), ``spend``
what it used from the archive's ``usage`` table, ``guard`` asks and decides,
``report`` is ``/budget``'s text.
"""

from backend.budgets.guard import BudgetGuard, BudgetHooks
from backend.budgets.limits import BUDGET_KEY, effective_limits, with_limit, without_limits
from backend.budgets.spend import Spend, spend_of

__all__ = [
    "BUDGET_KEY",
    "BudgetGuard",
    "BudgetHooks",
    "Spend",
    "effective_limits",
    "spend_of",
    "with_limit",
    "without_limits",
]
