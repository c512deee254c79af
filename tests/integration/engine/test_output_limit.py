"""The output limit from the config reaches the API: a provider's `max_tokens`, and a
role's own `[agents.ROLE] max_tokens` over it (a small local model may otherwise ramble
for minutes up to the 4096 default)."""

from __future__ import annotations

from pathlib import Path

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.llm.selection import choose_model
from tests.stubs import LLMStub, text_reply
from tests.support.engine_env import engine_env


def _config_file(tmp_path: Path, stub: LLMStub) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        'default_provider = "local"\n\n'
        "[providers.local]\n"
        'kind = "openai"\n'
        f'base_url = "{stub.openai_base_url}"\n'
        'profile = "generic"\n'
        'default_model = "tiny"\n'
        "max_tokens = 256\n\n"
        "[agents.librarian]\n"
        'provider = "local"\n'
        'model = "tiny"\n'
        "max_tokens = 64\n"
    )
    return path


def test_the_roles_limit_wins_over_its_providers(tmp_path: Path, llm_stub: LLMStub) -> None:
    config = load_config(_config_file(tmp_path, llm_stub), env=engine_env())
    assert choose_model(config, "librarian").max_tokens == 64
    assert choose_model(config, "architect").max_tokens == 256
    # A role whose entry names another provider does not lend it its limit.
    assert choose_model(config, "librarian", provider="local").max_tokens == 64
    unset = load_config(None, env=engine_env(OPENAI_API_KEY="k"))
    assert choose_model(unset, "architect").max_tokens is None


async def test_each_roles_limit_is_sent_with_its_requests(
    tmp_path: Path, llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    settings = load_config(_config_file(tmp_path, llm_stub), env=engine_env())
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    try:
        session = await engine.ensure_session()
        llm_stub.push(text_reply("planned"), text_reply("found"))
        await engine.submit(session.id, "@architect plan nothing")
        await engine.submit(session.id, "@librarian where is main?")
        sent = [r.body["max_tokens"] for r in llm_stub.requests if r.vendor == "openai"]
        assert sent == [256, 64]
    finally:
        await engine.aclose()
