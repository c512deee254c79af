"""The budget question as a front end sees it, and the one check of a new limit.

Why a question type of its own: a dialog that lets the user type a new limit must know
which measure it is (tokens or dollars) and what was used, to refuse a limit with no
room left before the answer ever reaches the engine, and to say why while the dialog
stays open. :class:`BudgetQuestion` is a :class:`~backend.events.ChoiceQuestion` (every
front end shows it as one) carrying those facts; :func:`read_new_limit` is the check
both the dialog and the guard apply, so the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.budgets.budget_dsl import BudgetUsageError, parse_value
from backend.budgets.report import amount
from backend.config.budgets import BudgetMeasure, BudgetScope
from backend.events import ChoiceQuestion

CONTINUE = "continue:"  # an answer "continue:N" goes on with N as the new limit
STOP = "stop"


@dataclass(frozen=True)
class BudgetQuestion(ChoiceQuestion):
    """A reached limit's question: continue with a new limit, or stop."""

    scope: BudgetScope = "session"
    measure: BudgetMeasure = "tokens"
    limit: float = 0.0  # the limit reached
    used: float = 0.0  # what was used against it: a new limit must be above it
    limit_label: str = ""  # e.g. "pipeline p1/e1 tokens"

    def check_limit(self, text: str) -> float:
        """``text`` as a new limit (see :func:`read_new_limit`)."""
        return read_new_limit(text, self.measure, self.used)

    def answer_for(self, value: float) -> str:
        """The answer that continues with ``value`` as the new limit."""
        return f"{CONTINUE}{raw_amount(self.measure, value)}"


def read_new_limit(text: str, measure: BudgetMeasure, used: float) -> float:
    """A new limit as typed (``2000``, ``2k``, ``1.5M`` tokens; ``3.50`` or ``$3.50``),
    optionally after ``continue:``, above ``used``; else :class:`BudgetUsageError`
    saying why."""
    typed = text.strip().lower().removeprefix(CONTINUE).strip()
    if not typed:
        raise BudgetUsageError(f"type a new {measure} limit above {amount(measure, used)}")
    value = parse_value(typed, measure)
    if value is None:  # "none": lifting a limit is /budget's, not this answer's
        raise BudgetUsageError(
            f"a new limit is a number; lift the limit with /budget ... {measure} none"
        )
    if value <= used:  # no room to go on: the next call would ask again at once
        raise BudgetUsageError(
            f"a new limit must be above the {amount(measure, used)} used, "
            f"not {amount(measure, value)}"
        )
    return value


def raw_amount(measure: BudgetMeasure, value: float) -> str:
    """An amount as an answer carries it: whole tokens, or dollars to the cent."""
    if measure == "tokens":
        return str(int(value))
    cents = f"{value:.2f}"
    return cents if float(cents) == value else repr(value)
