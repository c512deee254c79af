"""Cached input tokens: counted in the input, shown with their share, priced at the
cache rates."""

from __future__ import annotations

from backend.config.settings import DEFAULT_PRICES
from backend.llm.accounting import cost_usd, summarise, tokens_line
from backend.llm.types import Usage

CACHED = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=8_000,
               cache_write_tokens=1_000)  # fmt: skip


def _row(agent: str, usage: Usage, cost: float | None, priced: int = 3) -> dict[str, object]:
    return {"agent": agent, "provider": "anthropic", "model": "claude-sonnet-4-6", "calls": 3,
            **usage.model_dump(exclude={"estimated"}), "cost_usd": cost,
            "priced_calls": priced, "estimated_calls": 0}  # fmt: skip


def test_the_input_counts_every_prompt_token_and_says_how_much_was_cached() -> None:
    assert tokens_line(CACHED) == "10,000 in (80% cached: 8,000 read, 1,000 written) · 500 out"
    assert tokens_line(Usage(input_tokens=1_234, output_tokens=56)) == "1,234 in · 56 out"


def test_cached_tokens_cost_the_cache_prices() -> None:
    sonnet = DEFAULT_PRICES["claude-sonnet-4-6"]
    # 1,000 x $3 + 8,000 x $0.30 + 1,000 x $3.75 in, 500 x $15 out, per million.
    assert cost_usd(sonnet, CACHED) == (3_000 + 2_400 + 3_750 + 7_500) / 1_000_000
    uncached = Usage(input_tokens=10_000, output_tokens=500)
    assert cost_usd(sonnet, uncached) == (30_000 + 7_500) / 1_000_000


def test_status_shows_the_session_and_each_agent_with_its_cached_share() -> None:
    summary = summarise("s", [
        _row("architect", CACHED, 0.0166),
        _row("engineer", Usage(input_tokens=100, output_tokens=10), None, priced=0),
    ])  # fmt: skip
    assert summary.status_line() == (
        "10,100 in (79% cached: 8,000 read, 1,000 written) · 510 out · $0.0166+"
    )
    architect, engineer = (a.status_line() for a in summary.agents)
    assert architect == (
        "architect    anthropic/claude-sonnet-4-6 · 3 calls · "
        "10,000 in (80% cached: 8,000 read, 1,000 written) · 500 out · $0.0166"
    )
    assert engineer.endswith("100 in · 10 out · no price")
