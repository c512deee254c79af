"""`sylk sessions new --provider/--model`: a session made with its own model, which
its later `sylk run` turns use (real processes, the stub as the OpenAI API)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.stubs import LLMStub, text_reply

SYLK = [sys.executable, "-m", "sylk_tui"]


def sylk(
    *args: str, data_dir: Path, workspace: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SYLK, *args, "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, **env},
        check=False,
    )


def _env(tmp_path: Path, stub: LLMStub) -> dict[str, str]:
    config_dir = tmp_path / "config"
    config_dir.mkdir(exist_ok=True)
    return {
        "SYLK_CONFIG_DIR": str(config_dir),
        "OPENAI_BASE_URL": stub.openai_base_url,
        "OPENAI_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
        "SYLK_PROVIDER": "",
    }


def test_a_session_made_with_a_model_keeps_it_for_its_runs(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, llm_stub)
    made = sylk(
        "sessions", "new", "alpha", "--provider", "openai", "--model", "stub-x",
        data_dir=data_dir, workspace=workspace, env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "every role uses openai/stub-x" in made.stderr
    llm_stub.push(text_reply("hi from stub-x"))
    ran = sylk(
        "run", "--session", "alpha", "@architect say hi",
        data_dir=data_dir, workspace=workspace, env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "hi from stub-x" in ran.stdout
    assert llm_stub.requests[-1].body["model"] == "stub-x"


def test_an_unusable_provider_is_refused_and_no_session_is_made(
    llm_stub: LLMStub, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, llm_stub)
    refused = sylk(
        "sessions", "new", "beta", "--provider", "anthropic", "--model", "claude-x",
        data_dir=data_dir, workspace=workspace, env=env,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "provider 'anthropic' is not configured" in refused.stderr
    assert "Traceback" not in refused.stderr
    alone = sylk(
        "sessions", "new", "gamma", "--model", "m",
        data_dir=data_dir, workspace=workspace, env=env,
    )  # fmt: skip
    assert alone.returncode == 1 and "--model needs --provider" in alone.stderr
    listed = sylk("sessions", "list", "--json", data_dir=data_dir, workspace=workspace, env=env)
    assert json.loads(listed.stdout) == []
