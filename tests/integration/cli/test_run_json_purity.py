"""`sylk run --json` prints JSON lines alone on stdout, whatever happens (a tool call, a
failed one, an answer from the index, an error), so it pipes into `jq`; plain `sylk run`
puts each model call's words in a paragraph of their own and says each tool call in one
line on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.scripted import execute

TURNS = [
    {"text": "Reading.", "tool_calls": [execute("engineer.file.read", path="app.py")]},
    {"text": "And the other.", "tool_calls": [execute("engineer.file.read", path="gone.py")]},
    {"text": "x is 1."},
]


def sylk_run(tmp_path: Path, workspace: Path, *args: str, turns: list[object] | None = TURNS):  # type: ignore[no-untyped-def]
    """``turns`` None: no script (no model configured: the offline default)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    scripted = [] if turns is None else ["--script", str(script)]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--data-dir", str(tmp_path / "data"),
         "--workspace", str(workspace), *scripted, *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={**base, "SYLK_CONFIG_DIR": str(tmp_path / "no-config")},
    )  # fmt: skip


def _json_lines(stdout: str) -> list[dict[str, object]]:
    events = [json.loads(line) for line in stdout.splitlines()]  # each line alone is JSON
    assert all(isinstance(e, dict) and "kind" in e for e in events)
    return events


def test_json_stdout_is_json_lines_only_with_tool_calls_and_a_failed_one(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    result = sylk_run(tmp_path, workspace, "--json", "@engineer what is x?")
    assert result.returncode == 0, result.stderr
    steps = [e["step"] for e in _json_lines(result.stdout) if e["kind"] == "agent.step"]
    results = [s["data"]["content"] for s in steps if s["kind"] == "tool_result"]  # type: ignore[index]
    assert len(results) == 2 and '"ok": false' in results[1]
    assert "↳" not in result.stdout and "→ engineer" not in result.stdout


def test_json_stdout_stays_json_for_an_index_answer_and_an_error(
    tmp_path: Path, workspace: Path
) -> None:
    answered = sylk_run(tmp_path, workspace, "--json", "explain the cache", turns=None)
    assert answered.returncode == 0, answered.stderr
    _json_lines(answered.stdout)  # the answer printed for people went to stderr
    failed = sylk_run(tmp_path, workspace, "--json", "@engineer anything", turns=[])  # invalid
    assert failed.returncode != 0
    assert _json_lines(failed.stdout) and "Traceback" not in failed.stderr


def test_plain_run_separates_model_calls_and_says_tool_calls_on_stderr(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    result = sylk_run(tmp_path, workspace, "@engineer what is x?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reading.\n\nAnd the other.\n\nx is 1.\n"
    tools = [line for line in result.stderr.splitlines() if line.startswith("  ↳ ")]
    assert tools[0] == "  ↳ engineer.file.read app.py · ok"
    assert tools[1].startswith("  ↳ engineer.file.read gone.py · ") and "ok" not in tools[1]
