"""What `sylk run` says when a turn does not end plainly (issue 14, defects 4, 5 and 7):
an answer cut at the output limit, usage the server did not report, a model that keeps
sending malformed tool-call arguments. A real process against the stub."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backend.archive.store import DB_NAME
from sylk_tui.commands.run_output import EXIT_TRUNCATED
from tests.stubs.llm_script import Reply, StubToolCall
from tests.stubs.llm_stub import LLMStub

KEY = "sk-run-0123456789abcdef"
CUT = {"anthropic": "max_tokens", "openai": "length"}


def _run(stub: LLMStub, vendor: str, data_dir: Path, workspace: Path, text: str):  # type: ignore[no-untyped-def]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    if vendor == "anthropic":
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": stub.base_url}
    else:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": stub.openai_base_url}
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "--provider", vendor, f"@architect {text}"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**base, "SYLK_CONFIG_DIR": str(data_dir / "no-config"), **env},
    )  # fmt: skip


def test_a_truncated_answer_is_printed_said_and_has_its_own_exit_status(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["The first half ", "of a long"], stop_reason=CUT[vendor]))
    result = _run(llm_stub, vendor, data_dir, workspace, "explain everything")
    assert result.returncode == EXIT_TRUNCATED == 6, result.stderr
    assert result.stdout.strip() == "The first half of a long"
    assert (
        "sylk: answer truncated at the model's output limit (max_tokens 4096); "
        "ask for a shorter answer, or for it in parts" in result.stderr
    )
    assert "Traceback" not in result.stderr
    help_text = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--help"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "6    the answer was cut at the model's output limit" in help_text


@pytest.mark.parametrize("vendor", ["openai"])
def test_tokens_a_server_did_not_report_are_said_as_estimated(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["Forty-two."], include_usage=False))
    result = _run(llm_stub, vendor, data_dir, workspace, "what is the answer?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Forty-two."
    [line] = [x for x in result.stderr.splitlines() if "tokens" in x]
    assert line.startswith("sylk: ~") and " in · ~" in line
    assert line.endswith("out tokens (estimated: the server reported no usage)")
    with sqlite3.connect(data_dir / DB_NAME) as conn:
        [(tokens_in, tokens_out, estimated)] = conn.execute(
            "SELECT input_tokens, output_tokens, estimated FROM usage"
        ).fetchall()
    assert tokens_in > 0 and tokens_out > 0 and estimated == 1
    assert f"~{tokens_in:,} in · ~{tokens_out:,} out" in line


def test_usage_the_server_reported_is_not_said(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["Forty-two."]))
    result = _run(llm_stub, vendor, data_dir, workspace, "what is the answer?")
    assert result.returncode == 0 and "estimated" not in result.stderr


def test_malformed_arguments_twice_end_the_run_with_a_clear_error(
    llm_stub: LLMStub, vendor: str, data_dir: Path, workspace: Path
) -> None:
    broken = '{"path": "a.txt"'
    llm_stub.push(
        Reply(tool_calls=[StubToolCall("execute", raw_arguments=broken, id="call_1")]),
        Reply(tool_calls=[StubToolCall("execute", raw_arguments=broken, id="call_2")]),
    )
    result = _run(llm_stub, vendor, data_dir, workspace, "read a.txt")
    assert result.returncode == 1
    assert "the model sent malformed tool-call arguments twice (tool execute:" in result.stderr
    assert "try again or use a stronger model" in result.stderr
    assert "Traceback" not in result.stderr
