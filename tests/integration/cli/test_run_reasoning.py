"""`sylk run` shows what the model reasoned on stderr, never on stdout (the answer alone),
and `--json` streams it as steps; a real process against the stub playing vLLM."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.events import AgentStep
from sylk_tui.commands.run_output import THOUGHT_MARK, AnswerStream, ThoughtStream
from tests.stubs.llm_script import StubToolCall, text_reply, tool_reply
from tests.stubs.llm_stub import LLMStub

KEY = "sk-run-0123456789abcdef"
THOUGHT = "SECRET-THOUGHT: read the notes,\nthen answer."


@pytest.fixture
def vllm() -> Iterator[LLMStub]:
    with LLMStub(profile="vllm") as stub:
        stub.server.reasoning = THOUGHT
        yield stub


def run(args: list[str], stub: LLMStub, data_dir: Path, workspace: Path):  # type: ignore[no-untyped-def]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env = {**base, "SYLK_CONFIG_DIR": str(data_dir / "no-config"), "OPENAI_API_KEY": KEY,
           "OPENAI_BASE_URL": stub.openai_base_url}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "--provider", "openai", *args],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip


def test_plain_run_prints_reasoning_on_stderr_and_the_answer_alone_on_stdout(
    vllm: LLMStub, data_dir: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    read = {"op": "librarian.file.read", "args": {"path": "notes.txt"}}
    vllm.push(
        tool_reply(StubToolCall("execute", read), text=("Reading.",)),
        text_reply("You must ", "remember the milk."),
    )
    result = run(["@architect what do my notes say?"], vllm, data_dir, workspace)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Reading.\n\nYou must remember the milk."  # a model call each
    assert "SECRET" not in result.stdout
    marked = [line for line in result.stderr.splitlines() if line.startswith(THOUGHT_MARK)]
    # Both model calls reasoned; each line is marked, each call's reasoning ends its line.
    assert marked == [f"{THOUGHT_MARK}{line}" for line in THOUGHT.split("\n")] * 2
    assert "\x1b" not in result.stderr  # not a terminal: not dimmed


def test_json_run_streams_reasoning_steps(vllm: LLMStub, data_dir: Path, workspace: Path) -> None:
    vllm.push(text_reply("Forty-two."))
    result = run(["--json", "@architect the answer?"], vllm, data_dir, workspace)

    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    steps = [e["step"] for e in events if e["kind"] == "agent.step"]
    kinds = [s["kind"] for s in steps]
    assert kinds.index("reasoning_delta") < kinds.index("text_delta") < kinds.index("final")
    assert "".join(s["data"]["text"] for s in steps if s["kind"] == "reasoning_delta") == THOUGHT
    appended = [e["message"] for e in events if e["kind"] == "message.appended"]
    [answer] = [m for m in appended if m["type"] == "AGENT_REPLY"]
    assert answer["payload"]["text"] == "Forty-two." and answer["payload"]["reasoning"] == THOUGHT


def _step(kind: str, text: str) -> AgentStep:
    return AgentStep.model_validate(
        {"turn_id": "t", "session_id": "s", "role": "a", "step": 1, "kind": kind,
         "data": {"text": text}}
    )  # fmt: skip


def test_reasoning_after_an_unfinished_answer_line_starts_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    answer = AnswerStream()
    stderr = io.StringIO()
    answer.thoughts = ThoughtStream(stderr)
    answer.streamed(_step("text_delta", "Reading."))
    for piece in ("Now \x1b[31mthe", " file\nsays", " 42."):
        answer.streamed(_step("reasoning_delta", piece))
    answer.streamed(_step("text_delta", "It is 42."))
    answer.end()

    assert capsys.readouterr().out == "Reading.It is 42."
    assert stderr.getvalue() == f"\n{THOUGHT_MARK}Now the file\n{THOUGHT_MARK}says 42.\n"
