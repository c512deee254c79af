"""`sylk repl` with a reasoning model (the stub playing vLLM): the reasoning is printed
as `sylk run` prints it, on stderr with every line marked, never in the answer."""

from __future__ import annotations

from pathlib import Path

from sylk_tui.commands.run_output import THOUGHT_MARK
from tests.integration.repl.repl_process import piped
from tests.stubs.llm_script import text_reply
from tests.stubs.llm_stub import LLMStub

THOUGHT = "SECRET-THOUGHT: weigh it,\nthen answer."


def test_reasoning_goes_to_stderr_marked_and_the_answer_to_stdout(
    data_dir: Path, workspace: Path
) -> None:
    with LLMStub(profile="vllm") as stub:
        stub.server.reasoning = THOUGHT
        stub.push(text_reply("Forty-", "two."))
        env = {"OPENAI_API_KEY": "sk-repl-0123456789", "OPENAI_BASE_URL": stub.openai_base_url,
               "SYLK_PROVIDER": "openai"}  # fmt: skip
        result = piped("@architect the answer?\n", data_dir, workspace, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Forty-two."
    marked = [line for line in result.stderr.splitlines() if line.startswith(THOUGHT_MARK)]
    assert marked == [f"{THOUGHT_MARK}{line}" for line in THOUGHT.split("\n")]
