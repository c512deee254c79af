"""How many tokens an agent's conversation takes, against its model's context window.

The count is the provider's own when it reported one (the input tokens of the last
call, cached ones included: they occupy the window all the same), else the local
estimate of ``backend.llm.token_estimate`` (no tokenizer package: see its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from backend.config.context import DEFAULT_WINDOW, DEFAULT_WINDOWS
from backend.config.settings import SylkConfig
from backend.llm.token_estimate import count_request
from backend.llm.types import ChatMessage, ChatOptions, ChatRequest, Usage


@dataclass(frozen=True)
class ContextUse:
    """``tokens`` of a ``window``; ``estimated`` when no provider counted them."""

    tokens: int
    window: int
    estimated: bool = False

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window > 0 else 1.0

    @property
    def percent(self) -> int:
        return int(self.fraction * 100)

    def describe(self) -> str:
        """``12% of 200k`` (``~12%`` when estimated)."""
        mark = "~" if self.estimated else ""
        return f"{mark}{self.percent}% of {_short(self.window)}"


def _short(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M".replace(".0M", "M")
    if tokens >= 1000:
        return f"{round(tokens / 1000)}k"
    return str(tokens)


def _best(table: dict[str, int], names: tuple[str, ...]) -> int | None:
    """The window of the longest pattern matching one of ``names`` (most specific)."""
    hits = [
        (len(pattern), tokens)
        for pattern, tokens in table.items()
        if any(fnmatchcase(name, pattern.lower()) for name in names)
    ]
    return max(hits)[1] if hits else None


def context_window(settings: SylkConfig, provider: str, model: str) -> int:
    """The window of ``model`` served by ``provider``: the config's table, then the
    defaults, then ``[context] default``."""
    context = settings.context
    names = (model.lower(), f"{provider.lower()}/{model.lower()}")
    for table in (context.windows, DEFAULT_WINDOWS):
        found = _best(table, names)
        if found is not None:
            return found
    return context.default


def input_tokens(usage: Usage) -> int:
    """What the last call put in the window: fresh, cache-read and cache-written input."""
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def estimate(messages: list[ChatMessage], system: str | None = None) -> int:
    """The local estimate of ``messages`` (and a system prompt) in tokens."""
    request = ChatRequest(system=system, messages=messages, options=ChatOptions(model="estimate"))
    return count_request(request)


def measure(
    messages: list[ChatMessage],
    usage: Usage | None,
    window: int = DEFAULT_WINDOW,
    *,
    system: str | None = None,
) -> ContextUse:
    """The context ``messages`` take: the provider's count of the last call when it gave
    one (``usage``), else the estimate."""
    if usage is not None and input_tokens(usage) > 0:
        return ContextUse(input_tokens(usage), window, estimated=usage.estimated)
    return ContextUse(estimate(messages, system), window, estimated=True)
