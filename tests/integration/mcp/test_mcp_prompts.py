"""MCP prompts and the library's match template, from a real ``sylk mcp serve`` process
through the official client: listed, filled in, and bad input refused with a clear error."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import GetPromptResult, TextContent, TextResourceContents

from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.skills.builtin.catalog import agent_context

ROOT = Path(__file__).resolve().parents[3]
MATCH = "sylk://library/match"


def text(prompt: GetPromptResult) -> str:
    assert len(prompt.messages) == 1 and prompt.messages[0].role == "user"
    content = prompt.messages[0].content
    assert isinstance(content, TextContent)
    return content.text


async def read(client: Client, uri: str) -> str:
    content = (await client.read_resource(uri)).contents[0]
    assert isinstance(content, TextResourceContents) and content.mime_type == "text/markdown"
    return content.text


async def test_prompts_and_the_match_template(data_dir: Path, workspace: Path) -> None:
    (workspace / "books").mkdir()
    (workspace / "books" / "ledger.py").write_text(
        "\nclass Ledger:\n    def close(self):\n        pass\n\n\ndef open_ledger():\n"
        "    return Ledger()\n"
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False)
    parts = build(config)
    async with Engine.from_parts(parts) as engine:
        alpha = await engine.create_session("alpha")
        stored = await parts.gateway.execute(
            agent_context("archivalist", alpha.id, workspace),
            "archivalist.chronicle.store",
            {"content": "ledgers close at midnight UTC", "category": "decision",
             "title": "ledger close time"},
        )  # fmt: skip
        assert stored.ok, stored

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sylk_tui", "mcp", "serve", "--data-dir", str(data_dir),
              "--workspace", str(workspace), "--session", "alpha"],
        cwd=ROOT,
        env={k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
    )  # fmt: skip
    async with Client(server, cache=None) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        assert list(listed) == ["best-practice", "where-is", "briefing"]
        args = {
            name: [(a.name, a.required) for a in p.arguments or []] for name, p in listed.items()
        }
        assert args == {
            "best-practice": [("topic", True), ("category", False)],
            "where-is": [("symbol", True)],
            "briefing": [("tier", False)],
        }
        category = (listed["best-practice"].arguments or [])[1]
        assert "one of errors, performance, security, testing, toolchains" in (
            category.description or ""
        )

        advice = text(await client.get_prompt("best-practice", {"topic": "retry with backoff"}))
        assert advice.startswith("Work on this following the practices below: retry with backoff")
        assert "sylk://library/errors/retries-backoff" in advice and "jitter" in advice
        narrowed = text(
            await client.get_prompt("best-practice", {"topic": "retry", "category": "testing"})
        )
        assert "sylk://library/errors/" not in narrowed and "sylk://library/testing/" in narrowed
        nothing = text(await client.get_prompt("best-practice", {"topic": "zebra husbandry"}))
        assert "No fragment matched" in nothing

        where = text(await client.get_prompt("where-is", {"symbol": "Ledger"}))
        assert where.startswith("Where is `Ledger` defined")
        assert "definition at `books/ledger.py:2` (class)" in where
        assert "mention at `books/ledger.py:8`" in where  # the call in open_ledger

        briefing = text(await client.get_prompt("briefing", {}))
        assert "session alpha" in briefing and "ledger close time" in briefing

        bad = {
            "needs the argument 'topic'": ("best-practice", {}),
            "has no argument 'language'": ("best-practice", {"topic": "x", "language": "go"}),
            "category must be one of errors, performance": (
                "best-practice", {"topic": "x", "category": "cooking"}
            ),
            "tier must be one of micro, standard, full, not 'huge'": ("briefing", {"tier": "huge"}),
            "no prompt named 'summarise'": ("summarise", {}),
        }  # fmt: skip
        for message, (name, arguments) in bad.items():
            with pytest.raises(MCPError, match=message):
                await client.get_prompt(name, arguments)

        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
        assert f"{MATCH}{{?query,category,maxTokens,mode}}" in templates

        full = await read(client, f"{MATCH}?query=retry+with+backoff&maxTokens=1200")
        assert full.startswith("# Library: retry with backoff")
        assert "## errors: Retries with exponential backoff and jitter" in full
        assert "random.uniform" in full  # full mode: the fragment's body, not just its summary
        catalog = await read(client, f"{MATCH}?query=retry&mode=catalog&category=errors")
        assert "sylk://library/errors/retries-backoff" in catalog
        assert "random.uniform" not in catalog and "sylk://library/testing/" not in catalog

        refused = {
            "unknown parameter budget": f"{MATCH}?query=x&budget=5",
            "query is required": f"{MATCH}?maxTokens=100",
            "maxTokens must be a whole number from 1 to 20000, not 'lots'": (
                f"{MATCH}?query=x&maxTokens=lots"
            ),
            "mode must be one of catalog, full, index": f"{MATCH}?query=x&mode=everything",
            "the library has no category 'cooking'": f"{MATCH}?query=x&category=cooking",
        }
        for message, uri in refused.items():
            with pytest.raises(MCPError, match=message):
                await client.read_resource(uri)
