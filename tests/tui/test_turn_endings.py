"""The TUI's transcript when an answer is cut at the model's output limit, and /status
when the server reported no usage (issue 14, defects 4 and 5): the real SDKs over
HTTP to the stub."""

from __future__ import annotations

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.messages import MessageType
from sylk_tui.app import SylkApp
from tests.stubs.llm_script import Reply
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.tui.support import main_screen, send_line, settle, wait_for

SIZE = (120, 40)
KEY = "sk-tui-0123456789abcdef"


async def test_a_truncated_answer_says_so_in_the_transcript(engine_config: EngineConfig) -> None:
    with LLMStub() as stub:
        stub.push(Reply(text=["The flaky test ", "races the"], stop_reason="max_tokens"))
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
        app = SylkApp(Engine(engine_config, load_config(None, env=engine_env(env))))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = main_screen(app)
            await send_line(pilot, "@architect why is test_sync flaky?")
            transcript = screen.transcript
            await wait_for(pilot, lambda: transcript.draft is None, "the answer landed")
            last = transcript.messages[-1]
            assert last.type is MessageType.AGENT_REPLY and last.payload["stop"] == "truncated"
            assert last.payload["text"] == "The flaky test races the\n\n(truncated)"
            shown = [strip.text.strip() for strip in transcript.lines()]
            # The marker closes the answer once, styled, beside who answered and by which tier.
            assert "(truncated) · architect · dsl tier" in shown
            assert sum("(truncated)" in line for line in shown) == 1
            assert shown.index("(truncated) · architect · dsl tier") > next(
                i for i, line in enumerate(shown) if line.endswith("The flaky test races the")
            )


async def test_status_marks_usage_the_server_did_not_report(engine_config: EngineConfig) -> None:
    with LLMStub() as stub:
        stub.push(Reply(text=["Forty-two."], include_usage=False))
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}
        config = engine_config.model_copy(update={"provider": "openai"})
        app = SylkApp(Engine(config, load_config(None, env=engine_env(env))))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = main_screen(app)
            await send_line(pilot, "@architect what is the answer?")
            transcript = screen.transcript
            await wait_for(pilot, lambda: transcript.draft is None, "the answer landed")
            await send_line(pilot, "/status")
            status = str(transcript.messages[-1].payload["text"])
            [usage] = [line for line in status.splitlines() if line.startswith("Usage:")]
            assert usage.startswith("Usage: ~") and "(estimated)" in usage
