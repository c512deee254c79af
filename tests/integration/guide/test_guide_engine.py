"""The Guide inside the engine: every request routed with its tier recorded, sessions
kept apart, and a stalled or crashing agent reported while the rest keeps working."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.bus.errors import MessageDeadLetteredError
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.errors import SessionNotActiveError
from backend.events import EngineEvent, EngineNotice
from backend.guide.routing.decision import RouteDecision, Target
from backend.messages import Message, MessageType
from tests.stubs.llm_script import Reply, Stall, StubToolCall
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.support.polling import until

KEY = "sk-guide-0123456789abcdef"


def _settings(stub: LLMStub, **guide: Any) -> Any:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    base = load_config(None, env=engine_env(env))
    retry = base.retry.model_copy(update={"base_delay_s": 0.01, "deadline_s": 30.0})
    return base.model_copy(update={"retry": retry, "guide": base.guide.model_copy(update=guide)})


@pytest.fixture
async def online(llm_stub: LLMStub, data_dir: Path, workspace: Path) -> AsyncIterator[Engine]:
    engine = Engine(
        EngineConfig(data_dir=data_dir, workspace=workspace),
        _settings(llm_stub, stall_after_s=0.3, health_interval_s=0.05, request_timeout_s=1.5),
    )
    try:
        yield engine
    finally:
        await engine.aclose()


def _route(message: Message[dict[str, Any]]) -> dict[str, Any]:
    route = message.payload["route"]
    assert isinstance(route, dict)
    return route


async def test_offline_requests_are_routed_and_the_tier_recorded(engine: Engine) -> None:
    session = await engine.ensure_session()
    entry, answer = await engine.submit(session.id, "where is the auth middleware defined?")
    route = _route(entry)
    assert (route["target"], route["tier"], route["intent"]) == ("librarian", "pattern", "LOCATE")
    assert route["subject"] == "auth_middleware"
    assert answer.payload["agent"] == "librarian" and answer.payload["offline"] is True
    history, _ = await engine.submit(session.id, "what did we decide about caching last week?")
    assert _route(history)["target"] == "archivalist"
    assert _route(history)["time_scope"] == "last_week"
    again, _ = await engine.submit(session.id, "where is the auth middleware defined?")
    assert _route(again)["tier"] == "cache"


async def test_prose_session_commands_reach_the_session_manager(engine: Engine) -> None:
    first = await engine.ensure_session()
    entry, answer = await engine.submit(first.id, "start a new session called api")
    assert _route(entry)["target"] == "session_manager"
    assert "created and switched to session 'api'" in answer.payload["text"]
    second = engine.active_session()
    assert second is not None and second.name == "api"
    await engine.submit(second.id, "switch to session 1")
    assert engine.active_session().id == first.id  # type: ignore[union-attr]


async def test_status_and_task_commands(engine: Engine) -> None:
    session = await engine.ensure_session()
    await engine.submit(session.id, "where is the cache?")
    status = (await engine.submit(session.id, "/status"))[1].payload["text"]
    assert "Routing (count, p50, p99)" in status and "pattern" in status
    assert "offline" in status and "Dead letters in this session: 0" in status
    task = (await engine.submit(session.id, "/task t1 interrupt"))[1]
    assert "no pipeline runs task 't1'" in task.payload["text"] and task.payload["error"]


async def test_the_guides_ops_answer_through_the_gateway(
    engine: Engine, engine_parts: EngineParts
) -> None:
    from backend.skills.builtin.catalog import agent_context

    session = await engine.ensure_session()
    await engine.submit(session.id, "where is the cache?")
    ctx = agent_context("guide", session.id, Path(session.workspace))
    status = await engine_parts.gateway.execute(ctx, "guide.system.status", {})
    assert status.ok and "Routing (count, p50, p99)" in status.result
    classified = await engine_parts.gateway.execute(
        ctx, "guide.intent.classify", {"text": "what did we decide about caching?"}
    )
    assert classified.ok and classified.result["target"] == "archivalist"
    assert classified.result["intent"] == "HISTORICAL"
    # No pipeline runs: /task's op says so, naming what runs (nothing).
    task = await engine_parts.gateway.execute(
        ctx, "guide.task.interact", {"pipeline_id": "1", "action": "interrupt"}, dry_run=False
    )
    assert not task.ok and task.error is not None and task.error.code.value == "NOT_FOUND"
    assert task.error.details["reason"] == "pipeline_not_found" and "none" in task.error.message
    bad = await engine_parts.gateway.execute(ctx, "guide.task.interact", {"pipeline_id": "1"})
    assert bad.error is not None and bad.error.code.value == "VALIDATION_ERROR"


async def test_sessions_never_see_each_others_messages(engine: Engine) -> None:
    a = await engine.create_session("a")
    await engine.submit(a.id, "secret plan for a")
    b = await engine.create_session("b")
    await engine.submit(b.id, "plan for b")
    texts_b = [m.payload["text"] for m in await engine.transcript(b.id)]
    assert not any("secret plan for a" in t for t in texts_b)
    assert {m.session_id for m in await engine.transcript(a.id)} == {a.id}
    with pytest.raises(SessionNotActiveError):
        await engine.submit(a.id, "a is suspended now")


async def test_model_tier_routes_what_patterns_are_unsure_of(
    online: Engine, llm_stub: LLMStub
) -> None:
    route = {"target": "librarian", "intent": "GENERAL", "subject": "widgets", "confidence": 0.9}
    llm_stub.push(Reply(tool_calls=[StubToolCall("route", route)]), Reply(text=["Three widgets."]))
    session = await online.ensure_session()
    entry, answer = await online.submit(session.id, "widgets?")
    assert (_route(entry)["tier"], _route(entry)["target"]) == ("model", "librarian")
    assert answer.source == "librarian" and answer.payload["text"] == "Three widgets."
    assert answer.payload["response_type"] == MessageType.CONTEXT_RESPONSE.value
    assert llm_stub.count() == 2


async def test_a_stalled_agent_is_reported_and_others_keep_working(
    online: Engine, llm_stub: LLMStub
) -> None:
    notices: list[EngineNotice] = []

    def watch(event: EngineEvent) -> None:
        if isinstance(event, EngineNotice):
            notices.append(event)

    online.events.add_listener(watch)
    llm_stub.push(Stall(seconds=5))
    session = await online.ensure_session()
    stuck = (await online.submit(session.id, "@architect plan the migration"))[-1]
    assert stuck.type is MessageType.SYSTEM_NOTICE
    assert "did not answer in time" in stuck.payload["text"]
    await until(lambda: any("stalled" in n.text for n in notices), what="the stall to be noticed")
    assert any("architect is stalled" in n.text and n.level == "warning" for n in notices)
    llm_stub.push(Reply(text=["It is in src/cache.py."]))
    other = (await online.submit(session.id, "@librarian where is the cache?"))[-1]
    assert other.source == "librarian" and other.payload["text"] == "It is in src/cache.py."
    status = online.status_text(session.id)
    assert "architect" in status and "stalled" in status
    online.cancel_turn(session.id)


async def test_a_crashing_agent_is_dead_lettered_and_can_be_replayed(
    engine: Engine, engine_parts: EngineParts
) -> None:
    calls: list[str] = []

    async def crashing(message: Message[Any]) -> Message[Any]:
        calls.append(message.payload["text"])
        raise RuntimeError("engineer exploded")

    session = await engine.ensure_session()
    # An engineer whose handler blows up, on the real bus of this session.
    engine_parts.guide.ensure_agent(session.id, "engineer", crashing)
    decision = RouteDecision(target=Target.ENGINEER, confidence=1.0, tier="dsl", text="build it")
    with pytest.raises(MessageDeadLetteredError) as info:
        await engine_parts.dispatcher.ask(session.id, decision, [])
    assert "engineer exploded" in str(info.value) and "dl-1" in str(info.value)
    listing = (await engine.submit(session.id, "/deadletters"))[1].payload["text"]
    assert "handler_failed" in listing and "build it" in listing
    letter_id = listing.split()[0]
    replay = (await engine.submit(session.id, f"/deadletters replay {letter_id}"))[1]
    assert f"replayed {letter_id}" in replay.payload["text"]
    await until(lambda: len(calls) == 2, what="the replayed message to reach the engineer")
    assert calls == ["build it", "build it"]
    # The session keeps working: commands and other agents are unaffected.
    assert "session 1" in (await engine.submit(session.id, "/session list"))[1].payload["text"]
    purged = (await engine.submit(session.id, "/deadletters purge"))[1].payload["text"]
    assert purged.startswith("purged")


async def test_completing_a_session_stops_its_agents(
    engine: Engine, engine_parts: EngineParts
) -> None:
    async def idle(message: Message[Any]) -> Message[Any]:
        return message.reply(source="tester", type=MessageType.AGENT_REPLY, payload={"text": "ok"})

    session = await engine.ensure_session()
    engine_parts.guide.ensure_agent(session.id, "tester", idle)
    assert engine_parts.guide.bus.has_agent(session.id, "tester")
    await engine.complete_session(session.id)
    assert not engine_parts.guide.bus.has_session(session.id)
    assert engine_parts.guide.health.report(session.id) == []


async def test_the_route_cache_works_through_the_guides_prompt_hooks(
    engine: Engine, engine_parts: EngineParts
) -> None:
    hooks = engine_parts.gateway.hooks
    assert "route_cache_lookup" in hooks and "route_cache_store" in hooks
    first = await engine.route("where is the SessionManager class defined")
    again = await engine.route("where is the SessionManager class defined")
    assert (first.tier, again.tier) == ("pattern", "cache")
    assert again.subject == first.subject and again.intent == "LOCATE"
    hooks.remove("route_cache_lookup")  # without the lookup hook nothing is read back
    assert (await engine.route("where is the SessionManager class defined")).tier == "pattern"
