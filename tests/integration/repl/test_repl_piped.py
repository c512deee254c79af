"""`sylk repl` fed through a pipe: plain lines in, plain output out, a real engine."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.integration.repl.repl_process import piped

KEY = "sk-ant-api03-repl0123456789abcdefghij"


def test_a_request_a_command_and_bad_input_are_answered_and_it_goes_on(
    data_dir: Path, workspace: Path
) -> None:
    lines = "what does this project do?\n/status\n/stat\n/session switch nope\n/quit\n"
    result = piped(lines, data_dir, workspace, SYLK_PROVIDER="offline")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "no model is configured" in out.lower() or "configure" in out.lower()
    assert "Sessions:" in out and "Models per role" in out  # /status
    assert "error: unknown command /stat; did you mean /status?" in out
    assert "error: no session matches 'nope'" in out
    assert "Traceback" not in result.stderr + out


def test_an_edit_is_approved_inline(
    data_dir: Path, workspace: Path, edit_script: dict[str, str]
) -> None:
    lines = "@engineer change milk to bread in notes.txt\no\n/quit\n"
    result = piped(lines, data_dir, workspace, **edit_script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "? Allow the engineer to edit notes.txt?" in out
    assert "+buy bread" in out  # the diff, shown before the question
    assert "[o/s/d/r]" in out
    assert "↳ engineer.file.read notes.txt · ok" in out
    assert "↳ engineer.file.edit notes.txt · ok" in out
    assert out.index("Reading.") < out.index("? Allow") < out.index("Changed it.")
    assert (workspace / "notes.txt").read_text() == "buy bread\n"


def test_an_edit_denied_with_a_reason_changes_nothing(
    data_dir: Path, workspace: Path, edit_script: dict[str, str]
) -> None:
    lines = "@engineer change milk to bread in notes.txt\nr\nwe still want milk\n/quit\n"
    result = piped(lines, data_dir, workspace, **edit_script)
    assert result.returncode == 0, result.stderr
    assert "why not? we still want milk" in result.stdout
    edit_line = next(x for x in result.stdout.splitlines() if "↳ engineer.file.edit" in x)
    assert not edit_line.endswith("· ok")
    assert (workspace / "notes.txt").read_text() == "buy milk\n"


def test_the_history_file_is_private_redacted_and_keeps_multi_line_requests(
    data_dir: Path, workspace: Path
) -> None:
    lines = f"/remember note first half \\\nsecond half\n/remember note the key {KEY}\n"
    result = piped(lines, data_dir, workspace, SYLK_PROVIDER="offline", ANTHROPIC_API_KEY=KEY)
    assert result.returncode == 0, result.stderr  # the end of input leaves, as ctrl+d does
    history = data_dir / "repl_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    text = history.read_text()
    assert "+/remember note first half \n+second half\n" in text  # one entry, two lines
    assert "+/remember note the key " in text and KEY not in text
    assert KEY not in result.stdout


def test_a_looser_history_file_is_made_private(data_dir: Path, workspace: Path) -> None:
    history = data_dir / "repl_history"
    history.write_text("\n# 2026-01-01 00:00:00\n+/status\n")
    history.chmod(0o644)
    result = piped("/quit\n", data_dir, workspace, SYLK_PROVIDER="offline")
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert "+/status" in history.read_text()  # what was there is kept
