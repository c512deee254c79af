"""The ``[budgets]`` table: token and cost limits per session and per pipeline.

Why limits at all: many sessions run unattended, and a model call costs money. Every
limit is optional (none: unlimited). A session's own limits, set with ``/budget``
and kept in its metadata, win over these (``backend.budgets`` reads both). A
pipeline is one plan task's engineer -> inspector -> tester run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BudgetScope = Literal["session", "pipeline"]
BudgetMeasure = Literal["tokens", "cost"]


class BudgetLimits(BaseModel):
    """``[budgets]``: ``session_tokens``, ``session_cost_usd``, ``pipeline_tokens``,
    ``pipeline_cost_usd``; tokens are every token of a call (input, output, cache)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_tokens: int | None = Field(default=None, gt=0)
    session_cost_usd: float | None = Field(default=None, gt=0)
    pipeline_tokens: int | None = Field(default=None, gt=0)
    pipeline_cost_usd: float | None = Field(default=None, gt=0)

    @staticmethod
    def key(scope: BudgetScope, measure: BudgetMeasure) -> str:
        """The field holding ``scope``'s ``measure`` limit (``session_tokens``, ...)."""
        return f"{scope}_{'tokens' if measure == 'tokens' else 'cost_usd'}"

    def limit(self, scope: BudgetScope, measure: BudgetMeasure) -> float | None:
        value: float | None = getattr(self, self.key(scope, measure))
        return value

    @property
    def empty(self) -> bool:
        return all(v is None for v in self.model_dump().values())
