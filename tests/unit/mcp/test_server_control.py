"""The pieces behind changing MCP servers at runtime: the re-listing debounce, what a
re-listing changed, the stored enable choice, and the registry remembering gone ops."""

from __future__ import annotations

import asyncio
from typing import Any

from backend.mcp.client.models import McpTool
from backend.mcp.client.server_control import (
    McpServerDisabledError,
    McpToolGoneError,
    McpUnknownServerError,
    RelistDebounce,
    choice_key,
    chosen,
    tools_change,
)
from backend.skills.envelopes import code_for
from backend.skills.registry import GONE_KEPT, Registry


async def test_a_burst_is_one_relisting_and_news_during_it_is_one_more() -> None:
    calls: list[str] = []
    release = asyncio.Event()
    started = asyncio.Event()

    async def relist(server: str) -> None:
        calls.append(server)
        started.set()
        await release.wait()

    debounce = RelistDebounce(relist, delay_s=0)
    for _ in range(5):
        debounce.heard("a")  # one burst: the task is scheduled once
    await started.wait()
    assert calls == ["a"]
    debounce.heard("a")  # arrives while listing: the last change must be seen too
    debounce.heard("a")
    started.clear()
    release.set()
    await debounce.settled()
    assert calls == ["a", "a"] and debounce.runs == 2


async def test_a_failed_relisting_ends_quietly_and_close_cancels() -> None:
    async def broken(server: str) -> None:
        raise RuntimeError("down")

    debounce = RelistDebounce(broken, delay_s=0)
    debounce.heard("a")
    await debounce.settled()
    assert debounce.runs == 0

    async def forever(server: str) -> None:
        await asyncio.Event().wait()

    hung = RelistDebounce(forever, delay_s=0)
    hung.heard("b")
    await asyncio.sleep(0)
    await hung.aclose()  # returns: the task was cancelled


def tool(name: str, description: str = "d", **schema: Any) -> McpTool:
    return McpTool("s", name, f"s.{name}", description, {"type": "object", **schema})


def test_tools_change_says_added_removed_changed() -> None:
    before = [tool("a"), tool("b"), tool("c")]
    after = [tool("a"), tool("b", properties={"x": {}}), tool("d")]
    change = tools_change("s", before, after)
    assert (change.added, change.removed, change.changed) == (["s.d"], ["s.c"], ["s.b"])
    assert change.line() == "  s: added s.d; removed s.c; changed s.b (3 tools)"
    assert not tools_change("s", before, before).any


class Prefs:
    def __init__(self, **stored: Any) -> None:
        self.stored = stored

    def get_preference(self, key: str) -> Any:
        return self.stored.get(key)

    def set_preference(self, key: str, value: Any) -> None:
        self.stored[key] = value


def test_the_stored_choice_wins_over_the_config_and_junk_is_ignored() -> None:
    assert chosen(None, "s", True) is True
    assert chosen(Prefs(), "s", False) is False
    assert chosen(Prefs(**{choice_key("s"): False}), "s", True) is False
    assert chosen(Prefs(**{choice_key("s"): "yes"}), "s", False) is False  # not a bool


def test_errors_are_typed_and_name_the_server() -> None:
    unknown = McpUnknownServerError("x", ["b", "a"])
    assert code_for(unknown) == "NOT_FOUND" and "servers are: a, b" in str(unknown)
    assert unknown.details == {"reason": "mcp_unknown_server", "server": "x", "known": ["a", "b"]}
    assert "none is configured" in str(McpUnknownServerError("x", []))
    disabled = McpServerDisabledError("gh")
    assert code_for(disabled) == "CONFLICT" and "/mcp enable gh" in str(disabled)
    assert code_for(McpToolGoneError("gh", "gh.x")) == "NOT_FOUND"


def test_the_registry_remembers_a_bounded_number_of_gone_names() -> None:
    registry = Registry()
    registry.mark_gone("s.a", McpToolGoneError("s", "s.a"))
    assert isinstance(registry.gone("s.a"), McpToolGoneError)
    for n in range(GONE_KEPT + 5):
        registry.mark_gone(f"s.t{n}", McpToolGoneError("s", f"s.t{n}"))
    assert registry.gone("s.a") is None  # the oldest is forgotten first
    assert registry.gone(f"s.t{GONE_KEPT + 4}") is not None
