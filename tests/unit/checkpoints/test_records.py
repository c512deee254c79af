"""Checkpoint entries round-trip through their commit message; the texts /undo and
/diff answer with; a session id that could not name a ref is refused."""

from __future__ import annotations

import pytest

from backend.checkpoints.answers import diff_text, undo_text
from backend.checkpoints.git_process import CheckpointError
from backend.checkpoints.records import (
    CheckpointEntry,
    EntryKind,
    FileChange,
    SessionDiff,
    UndoConflictError,
    UndoOutcome,
    open_turns,
    session_ref,
)
from backend.checkpoints.service import _whole_files


def _entry(commit: str, kind: EntryKind, undoes: str | None = None) -> CheckpointEntry:
    return CheckpointEntry(commit, kind, "b" * 40, "a" * 40, "now", "t-" + commit, "engineer",
                           undoes, ("big.bin",))  # fmt: skip


def test_an_entry_round_trips_through_its_message() -> None:
    entry = _entry("c1", "turn")
    back = CheckpointEntry.parse("c1", entry.message())
    assert back == entry
    assert CheckpointEntry.parse("x", "a commit someone else made") is None


def test_open_turns_skip_the_undone_newest_first() -> None:
    entries = [_entry("u1", "undo", undoes="c2"), _entry("c2", "turn"), _entry("c1", "turn"),
               _entry("s", "start")]  # fmt: skip
    assert [e.commit for e in open_turns(entries)] == ["c1"]


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "a b", "x" * 200, "HEAD~1", "a\nb"])
def test_only_plain_ids_name_a_ref(bad: str) -> None:
    with pytest.raises(CheckpointError):
        session_ref(bad)
    assert session_ref("0f3a_b-9") == "refs/sylk/sessions/0f3a_b-9"


def test_the_conflict_names_the_files_and_says_nothing_changed() -> None:
    error = UndoConflictError(["a.py", "b.py"])
    assert "changed since the agent's turn: a.py, b.py" in str(error)
    assert "nothing was changed" in str(error)
    assert error.error_kind.value == "conflict"


def test_undo_text_lists_what_came_back() -> None:
    text = undo_text(UndoOutcome("t1234567890", "engineer", ["a.py"], ["new.py"], ["old.py"], 2))
    assert "engineer's turn (t1234567)" in text
    assert "restored: a.py" in text and "removed: new.py" in text and "recreated: old.py" in text
    assert "2 earlier turns can still be undone" in text


def test_diff_text_says_what_was_cut() -> None:
    files = [FileChange("a.py", "modified"), FileChange("b.bin", "added")]
    text = diff_text(SessionDiff(True, files, "diff --git a/a.py b/a.py\n", shown=1))
    assert "M a.py" in text and "A b.bin" in text
    assert text.endswith("… 1 more file (the diff is cut at 256 KiB)")
    assert "changed files yet" in diff_text(SessionDiff(False))


def test_a_long_patch_is_cut_at_a_file_boundary() -> None:
    raw = b"diff --git a/x b/x\n" + b"+" * 50 + b"\ndiff --git a/y b/y\n" + b"+" * 50 + b"\n"
    text, shown = _whole_files(raw, 100)
    assert shown == 1 and text.startswith("diff --git a/x") and "b/y" not in text
    assert _whole_files(raw, 10) == ("", 0)
