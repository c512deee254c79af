"""Context windows from the config's table over the defaults, and the context meter."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config.context import DEFAULT_WINDOW
from backend.config.settings import ConfigError, load_config
from backend.llm.types import ChatMessage, Usage
from backend.memory.windows import ContextUse, context_window, measure


def test_defaults_cover_the_known_families() -> None:
    config = load_config(None, env={})
    assert context_window(config, "anthropic", "claude-opus-4-5") == 200_000
    assert context_window(config, "openai", "gpt-4o-mini") == 128_000
    assert context_window(config, "openai", "gpt-4.1") == 1_047_576
    assert context_window(config, "openai", "o3-mini") == 200_000
    assert context_window(config, "ollama", "llama3.1:8b") == 131_072
    assert context_window(config, "ollama", "Qwen2.5-Coder") == 32_768
    # "o*" means the o-series, not every name starting with an o
    assert context_window(config, "ollama", "openhermes") == DEFAULT_WINDOW
    assert context_window(config, "scripted", "scripted") == DEFAULT_WINDOW


def test_the_config_table_wins_and_the_most_specific_pattern_wins() -> None:
    config = load_config(None, env={}).model_validate(
        {
            "context": {
                "default": 64_000,
                "windows": {"llama*": 8192, "llama3.1-70b*": 65_536, "local/*": 4096},
            }
        }
    )
    assert context_window(config, "ollama", "llama3.1:8b") == 8192
    assert context_window(config, "ollama", "llama3.1-70b-instruct") == 65_536
    assert context_window(config, "local", "anything") == 4096  # provider/model pattern
    assert context_window(config, "x", "unknown-model") == 64_000


def test_a_bad_window_is_a_typed_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[context.windows]\n"tiny*" = 10\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"context\.windows"):
        load_config(path, env={})


def test_measure_prefers_the_providers_count_cache_included() -> None:
    messages = [ChatMessage.user("hello " * 50)]
    usage = Usage(input_tokens=1000, cache_read_tokens=9000, cache_write_tokens=0, output_tokens=7)
    use = measure(messages, usage, 200_000)
    assert use == ContextUse(10_000, 200_000, estimated=False)
    assert use.fraction == pytest.approx(0.05)
    assert use.describe() == "5% of 200k"


def test_measure_estimates_when_no_usage_was_reported() -> None:
    messages = [ChatMessage.user("word " * 400), ChatMessage.assistant("reply " * 100)]
    for usage in (None, Usage()):
        use = measure(messages, usage, 1000)
        assert use.estimated
        assert 450 <= use.tokens <= 600
        assert use.describe().startswith("~")
