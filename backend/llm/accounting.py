"""Token accounting and cost, per call, per agent and per session."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from backend.config.settings import Price
from backend.llm.types import Usage

PER_MILLION = 1_000_000


def cost_usd(price: Price | None, usage: Usage) -> float | None:
    """The call's cost, or None when the model has no price in the table."""
    if price is None:
        return None
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * cache_read
        + usage.cache_write_tokens * cache_write
    )
    return total / PER_MILLION


def tokens_line(usage: Usage) -> str:
    """``13,455 in (73% cached: 9,876 read, 1,234 written) · 567 out``: the input counts
    every prompt token, cached or not; the cache part shows only when there is one."""
    cached, written = usage.cache_read_tokens, usage.cache_write_tokens
    prompt = usage.input_tokens + cached + written
    text = f"{prompt:,} in"
    if cached or written:
        text += f" ({cached / prompt:.0%} cached: {cached:,} read, {written:,} written)"
    return f"{text} · {usage.output_tokens:,} out"


class AgentUsage(BaseModel):
    agent: str
    provider: str
    model: str
    calls: int
    usage: Usage
    cost_usd: float | None
    unpriced_calls: int = 0
    estimated_calls: int = 0  # calls counted locally: the server reported no usage

    def status_line(self) -> str:
        """One line of /status's usage by agent: model, calls, tokens (cached), cost."""
        cost = "no price" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        if self.cost_usd is not None and self.unpriced_calls:
            cost += "+"
        mark = "~" if self.estimated_calls else ""
        return (
            f"{self.agent:<12} {self.provider}/{self.model} · {self.calls} calls · "
            f"{mark}{tokens_line(self.usage)} · {cost}"
        )


class UsageSummary(BaseModel):
    session_id: str | None
    agents: list[AgentUsage] = Field(default_factory=list)

    @property
    def total(self) -> Usage:
        result = Usage()
        for agent in self.agents:
            result = result + agent.usage
        return result

    @property
    def cost_usd(self) -> float:
        return sum(a.cost_usd or 0.0 for a in self.agents)

    @property
    def calls(self) -> int:
        return sum(a.calls for a in self.agents)

    @property
    def complete_cost(self) -> bool:
        """False when some call's model had no price: the cost is a lower bound."""
        return all(a.unpriced_calls == 0 for a in self.agents)

    @property
    def estimated_calls(self) -> int:
        return sum(a.estimated_calls for a in self.agents)

    def status_line(self) -> str:
        t = self.total
        cost = f"${self.cost_usd:.4f}" + ("" if self.complete_cost else "+")
        estimated = self.estimated_calls
        if not estimated:
            return f"{tokens_line(t)} · {cost}"
        which = (
            "estimated"
            if estimated == self.calls
            else f"{estimated} of {self.calls} calls estimated"
        )
        return f"~{t.input_tokens:,} in · ~{t.output_tokens:,} out ({which}) · {cost}"


def summarise(session_id: str | None, rows: list[dict[str, Any]]) -> UsageSummary:
    agents = [
        AgentUsage(
            agent=r["agent"],
            provider=r["provider"],
            model=r["model"],
            calls=r["calls"],
            usage=Usage(
                input_tokens=r["input_tokens"] or 0,
                output_tokens=r["output_tokens"] or 0,
                cache_read_tokens=r["cache_read_tokens"] or 0,
                cache_write_tokens=r["cache_write_tokens"] or 0,
                estimated=bool(r.get("estimated_calls")),
            ),
            cost_usd=r["cost_usd"],
            unpriced_calls=r["calls"] - r["priced_calls"],
            estimated_calls=r.get("estimated_calls") or 0,
        )
        for r in rows
    ]
    return UsageSummary(session_id=session_id, agents=agents)
