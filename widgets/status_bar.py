"""The status bar: one line above the footer saying what the session on screen runs on.

Which model the Guide and the engineer use (``offline`` when none is configured),
the session's tokens and cost and all sessions', how many requests each routing
tier decided, and whether the file watcher and the MCP servers are well. The
screen hands it the engine's ``StatusFacts`` when they change; it only draws them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from widgets.session_list.rows import compact_cost, compact_tokens

if TYPE_CHECKING:  # the engine's modules load lazily, after the first frame
    from backend.engine.status_facts import StatusFacts
    from backend.llm.accounting import UsageSummary

SEPARATOR = " │ "


def total_tokens(usage: UsageSummary) -> int:
    """Every token sent and received, cached prompt tokens included."""
    total = usage.total
    return (
        total.input_tokens
        + total.output_tokens
        + total.cache_read_tokens
        + total.cache_write_tokens
    )


def usage_text(usage: UsageSummary) -> str:
    """``1.2k tok $0.04`` (``+``: some calls had no price, so at least that much)."""
    cost = compact_cost(usage.cost_usd) + ("" if usage.complete_cost else "+")
    return f"{compact_tokens(total_tokens(usage))} tok {cost}"


def models_text(facts: StatusFacts) -> str:
    if facts.offline:
        return "offline (no model: /status says how)"
    shown = {m.model for m in facts.models}
    if len(shown) == 1:
        return f"model {shown.pop()}"
    return " · ".join(f"{m.role} {m.model}" for m in facts.models)


WATCHER_WORDS = {"ok": "ok", "idle": "ok", "down": "down", "off": "off (could not start)"}
"""``idle`` (no index built yet) is nothing to worry about: it reads as ``ok``."""


def health_text(facts: StatusFacts) -> str:
    parts = [f"watcher {WATCHER_WORDS.get(facts.watcher, facts.watcher)}"]
    if facts.mcp_total:
        mcp = f"mcp {facts.mcp_up}/{facts.mcp_total} up"
        if facts.mcp_down:
            mcp += f" ({', '.join(facts.mcp_down)} down)"
        parts.append(mcp)
    return " · ".join(parts)


def status_text(facts: StatusFacts) -> Text:
    """The whole line, styled lightly: labels dim, figures plain."""
    routes = " ".join(f"{tier} {count}" for tier, count in facts.routes) or "none yet"
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(models_text(facts), style="bold" if not facts.offline else "")
    line.append(SEPARATOR, style="dim")
    line.append("session ", style="dim")
    line.append(usage_text(facts.session_usage))
    line.append(" · all ", style="dim")
    line.append(usage_text(facts.all_usage))
    line.append(SEPARATOR, style="dim")
    line.append("routes ", style="dim")
    line.append(routes)
    line.append(SEPARATOR, style="dim")
    line.append(health_text(facts))
    return line


class StatusBar(Static):
    """One line; empty until the engine has said something about the session on screen."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        color: $text;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.facts: StatusFacts | None = None

    def show(self, facts: StatusFacts) -> None:
        if facts != self.facts:
            self.facts = facts
            self.update(status_text(facts))

    @property
    def plain(self) -> str:
        """The line as text (what a test or a screen reader reads)."""
        return status_text(self.facts).plain if self.facts is not None else ""
