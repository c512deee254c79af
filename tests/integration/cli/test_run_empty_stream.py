"""`sylk run` when the server answers HTTP 200 and then ends the stream without a reply
(issue 14): llama-cpp-python does so when asked to stream a tool call. The user reads
what happened and where to look, the exit status is not 0, no answer is stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.stubs.llm_script import Reply, StreamFault, text_reply
from tests.stubs.llm_stub import LLMStub


def _run(stub: LLMStub, data_dir: Path, workspace: Path, *flags: str) -> Any:
    stub.push(Reply(text=["lost"], fault=StreamFault("end", after_events=0)))
    stub.push(text_reply("a retry would have read this"))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env = {
        **base,
        "SYLK_CONFIG_DIR": str(data_dir / "no-config"),
        "OPENAI_API_KEY": "sk-local",
        "OPENAI_BASE_URL": stub.openai_base_url,
    }
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", *flags, "--data-dir", str(data_dir),
         "--workspace", str(workspace), "--provider", "openai", "--model", "tiny.gguf",
         "@architect hello"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip


def test_an_empty_stream_is_said_on_stderr_with_no_answer(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    result = _run(llm_stub, data_dir, workspace)
    assert result.returncode != 0 and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert "sylk: error: The architect could not answer" in result.stderr
    assert "the server ended the stream without a reply" in result.stderr


def test_an_empty_stream_is_an_error_step_and_no_answer(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    result = _run(llm_stub, data_dir, workspace, "--json")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert llm_stub.count("/v1/chat/completions") == 1  # not retried
    events = [json.loads(line) for line in result.stdout.splitlines()]
    steps = [e["step"] for e in events if e["kind"] == "agent.step"]
    assert not [s for s in steps if s["kind"] in ("final", "text_delta")]
    [error] = [s["data"]["error"] for s in steps if s["kind"] == "error"]
    assert "the server ended the stream without a reply (no chunk)" in error
    assert "its log says why" in error
    replies = [
        e["message"]["payload"]
        for e in events
        if e["kind"] == "message.appended" and e["message"]["type"] == "AGENT_REPLY"
    ]
    assert all(r["stop"] != "final" and not r["text"] for r in replies)
