"""/model in the composer: a role's model is switched for the session on screen, listed
by /model and /status, refused with a typed error for a role or provider that does not
exist; the palette offers it. A real engine and archive; no model is called."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from screens.session_commands import palette_entries
from sylk_tui.app import SylkApp
from tests.support.engine_env import engine_env
from tests.tui.support import main_screen, send_line, settle, transcript_texts

SIZE = (120, 40)
# A local OpenAI-compatible server needs no key: usable, and never called here.
LOCAL = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


@pytest.fixture
async def local_engine(engine_config: EngineConfig) -> AsyncIterator[Engine]:
    engine = Engine(engine_config, load_config(None, env=engine_env(LOCAL)))
    try:
        yield engine
    finally:
        await engine.aclose()


async def test_model_switches_a_role_and_lists_it(local_engine: Engine) -> None:
    app = SylkApp(local_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await send_line(pilot, "/model engineer openai/gpt-x")
        assert "the engineer uses openai/gpt-x" in transcript_texts(app)[-1]
        await send_line(pilot, "/model")
        listing = transcript_texts(app)[-1]
        assert "engineer     openai/gpt-x (this session's /model)" in listing
        assert "architect    openai/" in listing  # the config's choice, untouched
        await send_line(pilot, "/status")
        assert "engineer     openai/gpt-x" in transcript_texts(app)[-1]

        await send_line(pilot, "/model poet openai/x")
        assert "unknown agent role 'poet'" in transcript_texts(app)[-1]
        await send_line(pilot, "/model engineer anthropic/claude-x")
        assert "provider 'anthropic' is not configured" in transcript_texts(app)[-1]
        await send_line(pilot, "/model reset engineer")
        await send_line(pilot, "/model")
        assert "this session's /model" not in transcript_texts(app)[-1]
        assert main_screen(app).composer.value == ""


async def test_the_palette_offers_the_models(local_engine: Engine) -> None:
    app = SylkApp(local_engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        entries = {e.text: e for e in palette_entries(main_screen(app))}
        entries["Models in this session"].run()
        await settle(pilot)
        assert transcript_texts(app)[-1].startswith("Models in session")
