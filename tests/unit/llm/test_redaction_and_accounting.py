"""Keys are scrubbed from text and logs; usage becomes cost by the price table."""

from __future__ import annotations

import io
import logging

from backend.config.settings import Price
from backend.llm.accounting import cost_usd, summarise
from backend.llm.types import Usage
from backend.redaction import REDACTED, RedactingFilter, Redactor

KEY = "sk-test-abcdefghijklmnop"


def test_redactor_scrubs_nested_data() -> None:
    redactor = Redactor([KEY, "short"])
    data = {"a": f"key={KEY}", "b": [KEY, 3, ("x", KEY)], "short": "short stays"}
    out = redactor.data(data)
    assert KEY not in repr(out)
    assert out["a"] == f"key={REDACTED}" and out["b"][1] == 3
    assert out["short"] == "short stays"  # too short to be a key: left alone


def test_logging_filter_scrubs_messages_args_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(Redactor([KEY])))
    log = logging.getLogger("sylk-test-redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("calling with %s", KEY)
        try:
            raise RuntimeError(f"bad key {KEY}")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text and REDACTED in text and "RuntimeError" in text


def test_cost_from_price_table() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=10, cache_write_tokens=0
    )
    assert cost_usd(price, usage) == (3_000_000 + 1_500_000 + 3) / 1_000_000
    assert cost_usd(None, usage) is None
    no_cache_prices = Price(input=1.0, output=2.0)
    assert cost_usd(no_cache_prices, Usage(cache_read_tokens=1_000_000)) == 1.0


def test_summary_marks_unpriced_calls() -> None:
    rows = [
        {
            "agent": "architect", "provider": "openai", "model": "m", "calls": 2,
            "input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0,
            "cache_write_tokens": 0, "cost_usd": 0.5, "priced_calls": 1,
        }
    ]  # fmt: skip
    summary = summarise("s", rows)
    assert summary.calls == 2 and summary.total.input_tokens == 10
    assert not summary.complete_cost
    assert summary.status_line() == "10 in · 5 out · $0.5000+"
