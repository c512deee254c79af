"""How budgets read to a person: amounts, limit names and ``/budget``'s table."""

from __future__ import annotations

from backend.config.budgets import BudgetLimits, BudgetMeasure, BudgetScope


def amount(measure: BudgetMeasure, value: float) -> str:
    return f"{int(value):,} tokens" if measure == "tokens" else f"${value:,.2f}"


def limit_name(scope: BudgetScope, measure: BudgetMeasure, pipeline_id: str | None) -> str:
    where = f"pipeline {pipeline_id}" if scope == "pipeline" and pipeline_id else scope
    return f"{where} {'tokens' if measure == 'tokens' else 'cost'}"


def budget_text(
    limits: BudgetLimits,
    *,
    tokens: int,
    cost_usd: float,
    unpriced: int,
    off: bool,
    pipelines: dict[str, tuple[int, float]],
) -> str:
    """``/budget``: the session's use against its limits, and each pipeline's."""
    lines = ["Budget of this session" + (" (off: no limits)" if off else "") + ":"]

    def row(label: str, used: float, measure: BudgetMeasure, limit: float | None) -> str:
        cap = amount(measure, limit) if limit is not None else "no limit"
        return f"  {label:<18} {amount(measure, used)} of {cap}"

    lines.append(row("session tokens", tokens, "tokens", limits.session_tokens))
    lines.append(row("session cost", cost_usd, "cost", limits.session_cost_usd))
    if unpriced:
        lines.append(f"  ({unpriced} call(s) to a model with no price add no cost)")
    per: list[tuple[BudgetMeasure, float | None]] = [
        ("tokens", limits.pipeline_tokens),
        ("cost", limits.pipeline_cost_usd),
    ]
    caps = [amount(m, v) if v is not None else f"no {m} limit" for m, v in per]
    lines.append("  each pipeline      " + " and ".join(caps))
    for pipeline_id, (p_tokens, p_cost) in sorted(pipelines.items()):
        lines.append(f"    {pipeline_id}: {p_tokens:,} tokens, ${p_cost:,.2f}")
    lines.append("Set: /budget session|pipeline tokens|cost N · /budget off")
    return "\n".join(lines)
