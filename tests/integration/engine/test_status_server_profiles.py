"""/status names the server profile each OpenAI-compatible provider uses: detected from
the server's GET /models, or set in the config."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from tests.stubs import LLMStub, text_reply
from tests.support.engine_env import engine_env


@pytest.mark.parametrize(
    ("setting", "shown"), [("auto", "ollama (detected)"), ("vllm", "vllm (set)")]
)
async def test_status_shows_the_profile_once_the_server_was_asked(
    tmp_path: Path, data_dir: Path, workspace: Path, setting: str, shown: str
) -> None:
    with LLMStub(profile="ollama") as stub:
        path = tmp_path / "config.toml"
        path.write_text(
            'default_provider = "local"\n[providers.local]\nkind = "openai"\n'
            f'base_url = "{stub.openai_base_url}"\ndefault_model = "qwen"\nprofile = "{setting}"\n'
        )
        engine = Engine(
            EngineConfig(data_dir=data_dir, workspace=workspace),
            load_config(path, env=engine_env()),
        )
        try:
            session = await engine.ensure_session()
            assert "Server profiles" not in engine.status_text(session.id)  # none asked yet
            stub.push(text_reply("hi"))
            await engine.submit(session.id, "@architect hello")
            assert f"Server profiles: local: {shown}" in engine.status_text(session.id)
        finally:
            await engine.aclose()
