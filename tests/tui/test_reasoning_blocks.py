"""A model's reasoning in the transcript (issue 14): while the answer streams, a dimmed
"thinking…" block above its text; once answered, one folded line that the fold keys
open. The real ``openai`` SDK over HTTP to the stub playing vLLM, whose reasoning comes
in its own field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.style import Style

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from backend.messages import Message, MessageType
from screens.state.answer_drafts import AnswerDrafts
from sylk_tui.app import SylkApp
from tests.stubs.llm_script import Reply
from tests.stubs.llm_stub import LLMStub
from tests.support.engine_env import engine_env
from tests.tui.support import main_screen, settle, wait_for
from widgets.transcript.reasoning_block import LIVE_LINES, reasoning_action, render_reasoning

SIZE = (120, 40)
KEY = "sk-tui-0123456789abcdef"
THOUGHT = "The user asks about test_sync. It waits on the watcher, so the race is there."


def _texts(lines: list[Any]) -> list[str]:
    return [strip.text.strip() for strip in lines]


async def test_reasoning_streams_above_the_answer_then_folds_to_one_line(
    engine_config: EngineConfig,
) -> None:
    with LLMStub(profile="vllm") as stub:
        stub.server.reasoning = THOUGHT
        answer = ["The test ", "races the ", "watcher."]
        stub.push(Reply(text=answer, delay_s=0.15))
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}
        config = engine_config.model_copy(update={"provider": "openai"})
        app = SylkApp(Engine(config, load_config(None, env=engine_env(env))))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            screen = main_screen(app)
            transcript = screen.transcript
            screen.composer.value = "@architect why is test_sync flaky?"
            await pilot.press("enter")  # not send_line: it waits for the answer

            def thinking() -> bool:
                draft = transcript.draft
                return draft is not None and draft.payload.get("thinking") is True

            await wait_for(pilot, thinking, "the model thinking")
            await wait_for(
                pilot, lambda: "races" in _texts(transcript.lines())[-1], "the answer streaming"
            )
            shown = _texts(transcript.lines())
            head = next(i for i, t in enumerate(shown) if t.endswith("▾ thinking…"))
            assert any("so the race is there." in t for t in shown[head:])
            assert head < next(i for i, t in enumerate(shown) if "The test races" in t)
            # Dimmed: the reasoning's own component style, not the answer's.
            line = next(s for s in transcript.lines() if "so the race is there." in s.text)
            segment = next(seg for seg in line if "race is there" in seg.text)
            assert segment.style is not None
            assert segment.style.dim and segment.style.italic

            await wait_for(pilot, lambda: transcript.draft is None, "the answer landed")
            last = transcript.messages[-1]
            assert last.type is MessageType.AGENT_REPLY
            assert last.payload["text"] == "The test races the watcher."
            assert last.payload["reasoning"] == THOUGHT
            shown = _texts(transcript.lines())
            assert any(t.endswith("▸ reasoning (1 line)") for t in shown)
            assert not any("race is there" in t for t in shown)  # folded
            # The screen's fold key opens it (the newest block), and folds it again.
            await pilot.press("ctrl+o")
            await pilot.pause()
            shown = _texts(transcript.lines())
            assert any(t.endswith("▾ reasoning (1 line)") for t in shown)
            assert any("so the race is there." in t for t in shown)
            assert transcript.selected_text() == f"reasoning (1 line)\n{THOUGHT}"
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert not any("race is there" in t for t in _texts(transcript.lines()))


def test_a_live_block_shows_the_end_of_a_long_reasoning_and_no_escapes() -> None:
    lines = [f"step {n}" for n in range(30)]
    payload = {"reasoning": "\x1b]0;pwned\x07" + "\n".join(lines), "thinking": True}
    action = reasoning_action(payload)
    assert action is not None
    drawn = render_reasoning(action, 40, lambda _: Style(), expanded=True)
    texts = ["".join(seg.text for seg in segments).strip() for segments, _ in drawn]
    assert texts == ["▾ thinking…", "…", *lines[-LIVE_LINES:]]
    assert reasoning_action({"reasoning": " \n "}) is None
    message = Message[dict[str, Any]](
        session_id="s", source="architect", type=MessageType.AGENT_REPLY, payload=payload
    )
    assert "\x1b" not in str(reasoning_action(message.payload))


def test_the_draft_keeps_each_calls_reasoning_apart_from_its_text() -> None:
    drafts = AnswerDrafts(lambda: datetime(2026, 1, 1, tzinfo=UTC))
    for kind, text in [
        ("model_call", ""),
        ("reasoning_delta", "half"),
        ("retry", ""),  # the attempt is redone: its reasoning with it
        ("reasoning_delta", "First."),
        ("text_delta", "Reading."),
        ("model_call", ""),
        ("reasoning_delta", "Second."),
        ("text_delta", "Done."),
    ]:
        drafts.step("s1", "architect", kind, text)
    live = drafts.message("s1")
    assert live is not None
    assert live.payload["text"] == "Reading.\n\nDone. …"
    assert live.payload["reasoning"] == "First.\n\nSecond."
    assert live.payload["thinking"] is True
    drafts.step("s1", "architect", "final", "")
    ended = drafts.message("s1")
    assert ended is not None and ended.payload["thinking"] is False
