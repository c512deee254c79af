"""An agent's answer streams into the transcript and can be stopped with Escape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig
from backend.messages import MessageType
from sylk_tui.app import SylkApp
from tests.support.engine_env import engine_env
from tests.tui.support import main_screen, send_line, settle, wait_for

SIZE = (120, 40)
ANSWER = "The flaky test races the file watcher; wait for the debounce before asserting."


def _scripted_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig, delay: float
) -> Engine:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"chunk_delay_s": delay, "turns": [{"text": ANSWER}]}))
    monkeypatch.setenv("SYLK_SCRIPT", str(script))
    return Engine(engine_config.model_copy(update={"provider": "scripted"}))


async def test_the_answer_streams_then_lands_in_the_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    # 0.1 s a word: "races" is word 4 of 13, so the draft shows it for ~0.9 s, long enough
    # for the poll below to see it on a loaded machine (at 0.02 s it missed 1 run in 4).
    engine = _scripted_engine(tmp_path, monkeypatch, engine_config, delay=0.1)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        screen.composer.value = "why is test_sync flaky?"
        await pilot.press("enter")

        def streaming() -> bool:
            draft = screen.transcript.draft
            return draft is not None and "races" in str(draft.payload["text"])

        await wait_for(pilot, streaming, "the answer streaming")
        assert screen.composer.value == ""  # recorded: cleared while the answer streams
        assert "is answering" in str(screen.transcript.border_subtitle)
        await settle(pilot)
        await wait_for(pilot, lambda: screen.transcript.draft is None, "the draft removed")
        last = screen.transcript.messages[-1]
        assert last.type is MessageType.AGENT_REPLY
        assert last.payload["text"] == ANSWER
        assert str(screen.transcript.border_subtitle) == "active · 0 files indexed"


async def test_escape_stops_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    engine = _scripted_engine(tmp_path, monkeypatch, engine_config, delay=0.5)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        session = engine.active_session()
        assert session is not None
        screen.composer.value = "explain the race"
        await pilot.press("enter")
        await wait_for(pilot, lambda: engine.turn_running(session.id), "turn started")
        await pilot.press("escape")
        await settle(pilot)
        assert not engine.turn_running(session.id)
        assert screen.transcript.draft is None
        assert len(ANSWER) > len(str(screen.transcript.messages[-1].payload.get("text")))
        # The app still works after a stopped answer.
        await send_line(pilot, "/session list")
        assert "active" in str(screen.transcript.messages[-1].payload["text"])


async def test_a_real_sdk_answer_streams_into_the_tui(engine_config: EngineConfig) -> None:
    """The Anthropic SDK over HTTP to a local stand-in server, rendered as it streams."""
    from backend.config.settings import load_config
    from tests.stubs.llm_script import Reply
    from tests.stubs.llm_stub import LLMStub

    with LLMStub() as stub:
        stub.push(Reply(text=["The flaky test ", "races the ", "file watcher."], delay_s=0.05))
        env = {"ANTHROPIC_API_KEY": "sk-tui-0123456789abcdef", "ANTHROPIC_BASE_URL": stub.base_url}
        engine = Engine(engine_config, load_config(None, env=engine_env(env)))
        app = SylkApp(engine)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = main_screen(app)
            screen.composer.value = "@architect why is test_sync flaky?"
            await pilot.press("enter")

            def partial() -> bool:
                draft = screen.transcript.draft
                return draft is not None and str(draft.payload["text"]).startswith("The flaky")

            await wait_for(pilot, partial, "the first words on screen")
            await wait_for(pilot, lambda: screen.transcript.draft is None, "the answer landed")
            # The draft gave way to the recorded answer: never a moment without it.
            last = screen.transcript.messages[-1]
            assert last.type is MessageType.AGENT_REPLY and last.source == "architect"
            assert last.payload["text"] == "The flaky test races the file watcher."
            assert last.payload["provider"] == "anthropic"
        assert stub.count("/v1/messages") == 1
