"""`sylk run` when a local server refuses the request as invalid (issue 14, defect 2).

llama-cpp-python answers a request it cannot validate with HTTP 500 and pydantic's
words; FastAPI servers answer 422. Neither is asked again, and the user reads the
server's own words, not "the provider is unavailable or overloaded".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stubs.llm_script import Status
from tests.stubs.llm_stub import LLMStub

PYDANTIC_500 = (
    "1 validation error for ChatCompletionRequestAssistantMessage messages.1.content "
    "Input should be a valid string [type=string_type, input_value=None]"
)


@pytest.mark.parametrize(
    ("status", "said"),
    [(500, PYDANTIC_500), (400, "'tiny.gguf' does not support tools")],
)
def test_the_servers_words_reach_the_user_after_one_request(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, status: int, said: str
) -> None:
    llm_stub.push(Status(status, message=said))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env = {
        **base,
        "SYLK_CONFIG_DIR": str(data_dir / "no-config"),
        "OPENAI_API_KEY": "sk-local",
        "OPENAI_BASE_URL": llm_stub.openai_base_url,
    }
    result = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "--provider", "openai", "--model", "tiny.gguf",
         "@architect hello"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip
    assert result.returncode != 0
    assert said in result.stderr and f"HTTP {status}" in result.stderr
    assert "unavailable or overloaded" not in result.stderr
    assert "Traceback" not in result.stderr
    assert llm_stub.count("/v1/chat/completions") == 1
