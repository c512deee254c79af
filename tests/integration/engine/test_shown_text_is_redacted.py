"""What the engine hands back to be shown (``sylk run`` prints it) is what it stored:
a configured key is redacted there too, not only in the archive."""

from __future__ import annotations

from pathlib import Path

from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig
from tests.support.engine_env import engine_env

KEY = "sk-ant-api03-shown-text-key-0123456789abcdef"


async def test_a_remembered_line_and_its_answer_come_back_redacted(
    data_dir: Path, workspace: Path
) -> None:
    settings = load_config(None, env=engine_env(ANTHROPIC_API_KEY=KEY))
    engine = Engine(EngineConfig(data_dir=data_dir, workspace=workspace), settings)
    try:
        session = await engine.ensure_session()
        recorded = await engine.submit(session.id, f"/remember decision: rotate {KEY} monthly")
        shown = [str(m.payload.get("text", "")) for m in recorded]
        assert len(shown) == 2 and all(KEY not in text for text in shown), shown
        assert "rotate" in shown[0] and "monthly" in shown[0]
        stored = await engine.transcript(session.id)
        assert [m.payload for m in stored] == [m.payload for m in recorded]
    finally:
        await engine.aclose()
