"""The stable prefix a provider's prompt cache keys on: the system prompt and the tools
are the same bytes on every request of an agent's turn and on its next turns, while
what changes (the session brief after a write, the ops the conversation loads) rides
on the turn's request message, after that prefix.

Real SDKs talk to the HTTP stub; the requests are compared as the stub recorded them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.config.approvals import ApprovalMode
from backend.config.settings import DEFAULT_PRICES, load_config
from backend.engine import Engine, EngineConfig
from backend.engine.build import build
from backend.llm.accounting import cost_usd
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.stubs.prompt_cache import PromptCache
from tests.support.engine_env import engine_env

KEY = "sk-prefix-0123456789abcdef"
WRITE = {
    "op": "engineer.file.write",
    "args": {"path": "notes/todo.md", "content": "- ship it\n"},
    "dry_run": False,
}


def _env(vendor: str, stub: LLMStub) -> dict[str, str]:
    if vendor == "anthropic":
        return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}


def _prefix(vendor: str, body: dict[str, Any]) -> tuple[str, str]:
    """The request's system prompt and tools as the bytes they were sent as (key order kept)."""
    if vendor == "anthropic":
        return json.dumps(body.get("system")), json.dumps(body.get("tools"))
    system = [m for m in body["messages"] if m["role"] == "system"]
    return json.dumps(system), json.dumps(body.get("tools"))


def _unmarked(value: Any) -> Any:
    """``value`` without Anthropic's cache_control markers (they roll; the bytes around
    them are what the cache compares)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _first_user(body: dict[str, Any]) -> dict[str, Any]:
    return _unmarked(next(m for m in body["messages"] if m["role"] == "user"))


def _last_user_text(vendor: str, body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m["role"] == "user"]
    return json.dumps(_unmarked(users[-1]["content"]))


@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
async def test_system_and_tools_keep_their_bytes_across_steps_and_turns(
    vendor: str, llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    (workspace / "README.md").write_text("The answer is 42.\n")
    llm_stub.push(
        # Turn 1: search, write a file (the session brief changes mid-turn), read, answer.
        Reply(tool_calls=[StubToolCall("search", {"query": "write a file"})]),
        Reply(tool_calls=[StubToolCall("execute", WRITE)]),
        Reply(tool_calls=[StubToolCall("engineer__file__read", {"path": "README.md"})]),
        Reply(text=["Written."]),
        # Turn 2: words that load contextual ops; one tool call, then the answer.
        Reply(tool_calls=[StubToolCall("engineer__file__read", {"path": "notes/todo.md"})]),
        Reply(text=["It says ship it."]),
    )
    config = EngineConfig(
        data_dir=data_dir, workspace=workspace, approval_mode=ApprovalMode.AUTO_EDIT
    )
    engine = Engine.from_parts(
        build(config, load_config(None, env=engine_env(_env(vendor, llm_stub))))
    )
    try:
        session = await engine.ensure_session()
        first = (await engine.submit(session.id, "@engineer write the todo note"))[-1]
        assert first.payload["text"] == "Written.", first.payload
        second = await engine.submit(
            session.id, "@engineer run the tests and show the git diff of the todo note"
        )
        assert second[-1].payload["text"] == "It says ship it.", second[-1].payload
    finally:
        await engine.aclose()

    bodies = [r.body for r in llm_stub.requests if r.vendor == vendor]
    assert len(bodies) == 6
    prefixes = {_prefix(vendor, b) for b in bodies}
    assert len(prefixes) == 1, "the system prompt or the tools changed between requests"
    system, tools = prefixes.pop()
    assert "Session context" not in system and "notes/todo.md" not in system
    assert len(json.loads(tools)) <= 6
    # The dynamic context rides on each turn's request message instead, worked out once a
    # turn: every request of turn 1 carries the same message, written before the write.
    turn_one = {json.dumps(_first_user(b)["content"]) for b in bodies[:4]}
    assert len(turn_one) == 1 and "## Session context" in turn_one.pop()
    said = _last_user_text(vendor, bodies[4])
    assert "## Session context" in said and "Files changed in this session: notes/todo.md" in said
    # Each request of a turn starts with the whole of the one before it.
    for before, after in [(bodies[0], bodies[1]), (bodies[1], bodies[2]), (bodies[4], bodies[5])]:
        sent = _unmarked(before["messages"])
        assert _unmarked(after["messages"])[: len(sent)] == sent


async def test_cached_tokens_reach_the_archive_the_cost_and_status(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.prompt_cache = PromptCache()  # the stub plays Anthropic's prompt caching
    (workspace / "README.md").write_text("The answer is 42. " * 600)  # ~2,700 tokens read
    read = {"op": "librarian.file.read", "args": {"path": "README.md"}}
    llm_stub.push(
        Reply(tool_calls=[StubToolCall("execute", read)]),
        Reply(tool_calls=[StubToolCall("search", {"query": "read a file"})]),
        Reply(text=["It says 42."]),
    )
    config = EngineConfig(data_dir=data_dir, workspace=workspace)
    engine = Engine.from_parts(
        build(config, load_config(None, env=engine_env(_env("anthropic", llm_stub))))
    )
    try:
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@architect what does the README say?"))[-1]
        assert reply.payload["text"] == "It says 42.", reply.payload
        usage = engine.usage(session.id)
        total = usage.total
        # The third request read what the second wrote (the README's result included).
        assert total.cache_write_tokens > 2_000 and total.cache_read_tokens > 2_000
        (architect,) = usage.agents
        expected = cost_usd(DEFAULT_PRICES["claude-sonnet-4-6"], total)
        assert architect.cost_usd == pytest.approx(expected)
        status = str((await engine.submit(session.id, "/status"))[-1].payload["text"])
        assert f"{total.cache_read_tokens:,} read" in status
        assert "architect    anthropic/claude-sonnet-4-6 · 3 calls · " in status
    finally:
        await engine.aclose()
