"""The Guide's model tier is bounded (issue 14, defect 6), built by the engine from config.

A small model that answers in prose, or stalls, costs one bounded attempt: the
pattern tier's guess is used, the request carried the bounds ([guide]
model_tier_max_tokens, the route tool forced), nothing is retried and the stalled
connection is abandoned. The tier uses the guide role's own model ([agents.guide]).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.config.settings import AgentModel, SylkConfig, load_config
from backend.engine import Engine, EngineConfig
from tests.stubs import LLMStub, Stall, StubToolCall, text_reply, tool_reply
from tests.support.engine_env import engine_env
from tests.support.polling import until

KEY = "sk-guide-bounds-0123456789"
UNSURE = "widgets?"  # the patterns are not confident: the model tier is asked
FORCED = {
    "anthropic": {"type": "tool", "name": "route"},
    "openai": {"type": "function", "function": {"name": "route"}},
}


def _settings(stub: LLMStub, vendor: str, deadline_s: float) -> SylkConfig:
    if vendor == "anthropic":
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    else:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}
    base = load_config(None, env=engine_env(env))
    guide = base.guide.model_copy(
        update={"model_tier_deadline_s": deadline_s, "model_tier_max_tokens": 77}
    )
    return base.model_copy(
        update={
            "guide": guide,
            "default_provider": vendor,
            "agents": {"guide": AgentModel(provider=vendor, model="small-router")},
        }
    )


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def online(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Engine]:
    # Short only where the stall must reach it (its test imports the SDKs first: a
    # first import inside the call would count against the deadline).
    deadline = 1.0 if "stalled" in request.node.name else 10.0
    engine = Engine(
        EngineConfig(data_dir=data_dir, workspace=workspace), _settings(llm_stub, vendor, deadline)
    )
    try:
        yield engine
    finally:
        await engine.aclose()


def _bounds(body: dict[str, Any]) -> tuple[Any, Any, str]:
    limit = body.get("max_tokens", body.get("max_completion_tokens"))
    return limit, body.get("tool_choice"), body["model"]


async def test_a_forced_route_call_goes_to_the_guides_own_model(
    online: Engine, llm_stub: LLMStub, vendor: str
) -> None:
    route = {"target": "librarian", "intent": "GENERAL", "subject": "widgets", "confidence": 0.9}
    llm_stub.push(tool_reply(StubToolCall("route", route)))
    decision = await online.route(UNSURE)
    assert (decision.tier, decision.target.value) == ("model", "librarian")
    assert _bounds(llm_stub.requests[-1].body) == (77, FORCED[vendor], "small-router")


async def test_a_prose_answer_leaves_the_pattern_tiers_guess(
    online: Engine, llm_stub: LLMStub, vendor: str
) -> None:
    llm_stub.push(text_reply("I would say the librarian ", "should take this one."))
    decision = await online.route(UNSURE)
    assert decision.tier == "pattern"
    assert llm_stub.count() == 1
    assert _bounds(llm_stub.requests[0].body) == (77, FORCED[vendor], "small-router")


async def test_a_stalled_model_is_abandoned_at_the_deadline_and_not_retried(
    online: Engine, llm_stub: LLMStub
) -> None:
    importlib.import_module("anthropic")
    importlib.import_module("openai")
    llm_stub.push(Stall(seconds=30.0), text_reply("never asked"))
    decision = await online.route(UNSURE)
    assert decision.tier == "pattern"
    assert llm_stub.count() == 1  # one attempt: the deadline is not spent on a retry
    await until(lambda: llm_stub.aborted >= 1, what="the client to hang up on the stall")
    assert llm_stub.pending == 1


async def test_an_unusable_guide_provider_leaves_routing_to_the_patterns(
    data_dir: Path, workspace: Path
) -> None:
    settings = load_config(None, env=engine_env()).model_copy(
        update={"agents": {"guide": AgentModel(provider="anthropic", model="claude-haiku-4-5")}}
    )
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    try:
        decision = await engine.route(UNSURE)
        assert decision.tier == "pattern"
        status = engine.status_text((await engine.ensure_session()).id)
        assert "guide        unusable: provider 'anthropic' is not configured" in status
    finally:
        await engine.aclose()


async def test_a_sessions_own_guide_model_routes_its_requests(
    online: Engine, llm_stub: LLMStub, vendor: str
) -> None:
    session = await online.ensure_session()
    _, said = await online.submit(session.id, f"/model guide {vendor}/session-router")
    assert f"the guide uses {vendor}/session-router" in str(said.payload["text"])
    route = {"target": "librarian", "intent": "GENERAL", "subject": "widgets", "confidence": 0.9}
    llm_stub.push(tool_reply(StubToolCall("route", route)), text_reply("Three widgets."))
    entry, _ = await online.submit(session.id, UNSURE)
    assert entry.payload["route"]["tier"] == "model"
    assert llm_stub.requests[0].body["model"] == "session-router"
