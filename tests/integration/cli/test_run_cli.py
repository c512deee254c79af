"""`sylk run`: one request through the engine, as a real process, against the stub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.stubs.llm_script import Reply, Status, StubToolCall
from tests.stubs.llm_stub import LLMStub

KEY = "sk-run-0123456789abcdef"


def run(args: list[str], env: dict[str, str], data_dir: Path, workspace: Path):  # type: ignore[no-untyped-def]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return subprocess.run(
        [sys.executable, "-m", "sylk_tui", "run", "--data-dir", str(data_dir),
         "--workspace", str(workspace), *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={**base, "SYLK_CONFIG_DIR": str(data_dir / "no-config"), **env},
    )  # fmt: skip


def test_streams_an_answer_from_anthropic(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    llm_stub.push(
        Reply(
            text=["Reading."],
            tool_calls=[
                StubToolCall(
                    "execute", {"op": "librarian.file.read", "args": {"path": "notes.txt"}}
                )
            ],
        ),
        Reply(text=["You must ", "remember the milk."]),
    )
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url}
    result = run(
        ["--session", "errands", "@architect what do my notes say?"], env, data_dir, workspace
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Reading.\n\nYou must remember the milk."  # a model call each
    assert "→ architect · dsl" in result.stderr  # the route, shown apart from the answer
    listing = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "sessions", "list", "--json",
         "--data-dir", str(data_dir), "--workspace", str(workspace)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    rows = json.loads(listing.stdout)
    assert [r["name"] for r in rows] == ["errands"] and rows[0]["messages"] == 2


def test_json_lines_of_engine_events_from_openai(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Reply(text=["hi ", "there"]))
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": llm_stub.openai_base_url}
    args = ["--provider", "openai", "--model", "local-model", "--json", "@architect hello"]
    result = run(args, env, data_dir, workspace)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["kind"] for e in events]
    assert "agent.step" in kinds and kinds[-1] == "message.appended"
    steps = [e["step"]["kind"] for e in events if e["kind"] == "agent.step"]
    assert steps[0] == "model_call" and steps[-1] == "final" and "text_delta" in steps
    assert llm_stub.requests[0].body["model"] == "local-model"
    assert KEY not in result.stdout


def test_failures_exit_non_zero_with_a_clear_message(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    llm_stub.push(Status(401, message="bad key"))
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url}
    result = run(["add a retry to the fetcher"], env, data_dir, workspace)
    assert result.returncode == 1
    assert "sylk: error:" in result.stderr and "ANTHROPIC_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_offline_says_what_to_configure(data_dir: Path, workspace: Path) -> None:
    result = run(["add a retry to the fetcher"], {}, data_dir, workspace)
    assert result.returncode == 3
    assert "No language model is configured" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr
    ok = run(["/session list"], {}, data_dir, workspace)
    assert ok.returncode == 0 and "session 1" in ok.stdout


def test_a_corrupt_config_file_is_reported(data_dir: Path, workspace: Path) -> None:
    config_dir = data_dir / "cfg"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text("[retry\nmax_attempts = 3")
    result = run(["add a retry"], {"SYLK_CONFIG_DIR": str(config_dir)}, data_dir, workspace)
    assert result.returncode == 2  # bad settings, as `sylk run --help` says
    assert "is not valid TOML" in result.stderr and "Traceback" not in result.stderr
    (config_dir / "config.toml").write_text('database_url = "mysql://db/sylk"\n')
    result = run(["add a retry"], {"SYLK_CONFIG_DIR": str(config_dir)}, data_dir, workspace)
    assert result.returncode == 2
    assert "scheme 'mysql'" in result.stderr and "Traceback" not in result.stderr


def test_route_explains_a_decision_without_running_it(data_dir: Path, workspace: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "route", "--json", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "how did we handle the auth migration last month?"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "SYLK_CONFIG_DIR": str(data_dir / "none")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    decision = json.loads(result.stdout)
    assert decision["target"] == "archivalist" and decision["tier"] == "pattern"
    assert decision["intent"] == "HISTORICAL" and decision["time_scope"] == "last_month"
    assert decision["subject"] == "auth_migration" and decision["confidence"] >= 0.75
    plain = run(["x"], {}, data_dir, workspace)  # a run afterwards: nothing was recorded by route
    assert plain.returncode in (0, 3)
    text = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "route", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "/session", "switch", "2"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "target: session_manager" in text and "tier: dsl" in text
    bad = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "route", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "/session", "frob"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 1 and "unknown /session verb" in bad.stderr


def test_route_uses_the_model_tier_when_unsure(
    llm_stub: LLMStub, data_dir: Path, workspace: Path
) -> None:
    route = {"target": "academic", "confidence": 0.8, "subject": "raft"}
    llm_stub.push(Reply(tool_calls=[StubToolCall("route", route)]))
    result = subprocess.run(
        [sys.executable, "-m", "sylk_tui", "route", "--json", "--data-dir", str(data_dir),
         "--workspace", str(workspace), "raft?"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "SYLK_CONFIG_DIR": str(data_dir / "none"),
             "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm_stub.base_url},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    decision = json.loads(result.stdout)
    assert (decision["tier"], decision["target"]) == ("model", "academic")


def test_offline_locate_answers_from_the_index_and_follows_edits(
    data_dir: Path, workspace: Path
) -> None:
    (workspace / "billing").mkdir()
    source = workspace / "billing" / "ledger.py"
    source.write_text("import os\n\n\nclass LedgerBook:\n    pass\n")
    (workspace / "web.ts").write_text("export class LedgerView {}\n")
    first = run(["--provider", "offline", "where is LedgerBook defined"], {}, data_dir, workspace)
    assert first.returncode == 0, first.stderr
    assert "`billing/ledger.py:4` class `LedgerBook`" in first.stdout
    assert "no model used" in first.stdout
    assert "→ librarian · pattern · LOCATE" in first.stderr
    source.write_text("import os\n\n# moved down\n\n\n\nclass LedgerBook:\n    pass\n")
    again = run(["--provider", "offline", "where's the LedgerBook class?"], {}, data_dir, workspace)
    assert again.returncode == 0, again.stderr
    assert "`billing/ledger.py:7` class `LedgerBook`" in again.stdout
    assert "ledger.py:4" not in again.stdout
    asked = ["--provider", "offline", "find the definition of LedgerView"]
    ts = run(asked, {}, data_dir, workspace)
    assert "`web.ts:1` class `LedgerView`" in ts.stdout
