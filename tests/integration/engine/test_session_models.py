"""A session's /model choice: kept with the session across a restart, used by its
agent turns at the (stub) vendor API, and beaten by the run's own --model."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config.settings import SylkConfig, load_config
from backend.engine import Engine, EngineConfig
from tests.stubs import LLMStub, text_reply
from tests.support.engine_env import engine_env

KEY = "sk-session-models-0123456789"


def _settings(stub: LLMStub) -> SylkConfig:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    base = load_config(None, env=engine_env(env))
    retry = base.retry.model_copy(update={"base_delay_s": 0.01, "max_attempts": 1})
    return base.model_copy(update={"retry": retry})


async def _ask_architect(engine: Engine, stub: LLMStub, session_id: str) -> str:
    stub.push(text_reply("hello"))
    _, answer = await engine.submit(session_id, "@architect say hello")
    assert answer.payload["text"] == "hello"
    model = stub.requests[-1].body["model"]
    assert isinstance(model, str)
    return model


async def _command(engine: Engine, session_id: str, text: str) -> str:
    _, answer = await engine.submit(session_id, text)
    return str(answer.payload["text"])


async def test_a_sessions_model_survives_a_restart_and_reaches_the_api(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    config = EngineConfig(data_dir=data_dir, workspace=workspace)
    first = Engine(config, _settings(llm_stub))
    try:
        session = await first.ensure_session()
        assert await _ask_architect(first, llm_stub, session.id) == "claude-sonnet-4-6"
        said = await _command(first, session.id, "/model architect anthropic/claude-big-override")
        assert "the architect uses anthropic/claude-big-override" in said
        assert await _ask_architect(first, llm_stub, session.id) == "claude-big-override"
    finally:
        await first.aclose()

    again = Engine(config, _settings(llm_stub))
    try:
        assert (await again.ensure_session()).id == session.id
        assert await _ask_architect(again, llm_stub, session.id) == "claude-big-override"
        shown = await _command(again, session.id, "/model")
        assert "architect    anthropic/claude-big-override (this session's /model)" in shown
        assert "claude-big-override" in again.status_text(session.id)
        await _command(again, session.id, "/model reset")
        assert await _ask_architect(again, llm_stub, session.id) == "claude-sonnet-4-6"
    finally:
        await again.aclose()


async def test_the_runs_model_flag_wins_over_the_sessions_choice(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    flagged = EngineConfig(data_dir=data_dir, workspace=workspace, model="run-model")
    engine = Engine(flagged, _settings(llm_stub))
    try:
        session = await engine.ensure_session()
        said = await _command(engine, session.id, "/model anthropic/session-model")
        assert "this run's --provider/--model is given, it wins" in said
        assert await _ask_architect(engine, llm_stub, session.id) == "run-model"
    finally:
        await engine.aclose()


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ("/model poet anthropic/x", "unknown agent role 'poet'"),
        ("/model ghost/x", "unknown provider 'ghost'"),
        ("/model engineer openai/gpt-x", "provider 'openai' is not configured"),
        ("/model engineer", "needs the provider and model"),
    ],
)
async def test_bad_model_commands_are_refused_and_nothing_is_stored(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, command: str, fragment: str
) -> None:
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), _settings(llm_stub))
    try:
        session = await engine.ensure_session()
        _, answer = await engine.submit(session.id, command)
        assert fragment in str(answer.payload["text"])
        assert "models" not in engine.get_session(session.id).metadata
    finally:
        await engine.aclose()
