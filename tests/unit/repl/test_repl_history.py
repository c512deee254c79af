"""The repl's history file: private to the user, never followed through a link, and
never holding a configured key."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from backend.redaction import Redactor
from sylk_tui.repl.line_input import HistoryFileError, join_continued, open_history

KEY = "sk-ant-api03-history0123456789abcdef"


def test_created_private_and_redacted(tmp_path: Path) -> None:
    path = tmp_path / "data" / "repl_history"
    history = open_history(path, Redactor([KEY]).text)
    history.store_string(f"/remember note {KEY}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert KEY not in path.read_text() and "+/remember note " in path.read_text()
    assert list(open_history(path, str).load_history_strings())  # read back


def test_a_link_in_its_place_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    target.chmod(0o644)
    (tmp_path / "repl_history").symlink_to(target)
    with pytest.raises(HistoryFileError, match="it is a link"):
        open_history(tmp_path / "repl_history", str)
    assert target.read_text() == "keep\n" and stat.S_IMODE(target.stat().st_mode) == 0o644


def test_lines_ending_in_a_backslash_join_with_line_breaks() -> None:
    assert join_continued(["first \\", "second\\", "third"]) == "first \nsecond\nthird"
