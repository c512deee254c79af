"""Reading ``git merge-tree --write-tree -z --name-only`` output into conflicted files,
and what a session's metadata says of its worktree. Pure: no git runs here."""

from __future__ import annotations

from backend.sessions.models import Session
from backend.worktrees import ConflictedFile, MergeConflictError
from backend.worktrees.merging import conflicts_from
from backend.worktrees.session_view import branch_label, isolation_line, merge_hint

TREE = "b6aeb27925eccc915325e0eefbc6e474b3e9f407"


def z(*fields: str) -> str:
    return "\0".join(fields) + "\0"


def test_a_clean_merge_has_no_conflicts() -> None:
    assert conflicts_from(z(TREE)) == []


def test_each_conflicted_file_gets_the_kind_git_names() -> None:
    out = z(TREE, "f", "g", "", "1", "f", "Auto-merging", "Auto-merging f\n",
            "1", "f", "CONFLICT (contents)", "CONFLICT (content): Merge conflict in f\n",
            "1", "g", "CONFLICT (modify/delete)", "g deleted in main\n")  # fmt: skip
    assert conflicts_from(out) == [
        ConflictedFile("f", "contents"),
        ConflictedFile("g", "modify/delete"),
    ]


def test_a_message_naming_two_paths_applies_to_both_and_unknown_kinds_say_conflict() -> None:
    out = z(TREE, "a", "b", "c", "", "2", "a", "b", "CONFLICT (rename/rename)", "renamed twice\n")
    assert conflicts_from(out) == [
        ConflictedFile("a", "rename/rename"),
        ConflictedFile("b", "rename/rename"),
        ConflictedFile("c", "conflict"),
    ]


def test_the_conflict_error_lists_every_file_and_kind() -> None:
    error = MergeConflictError("sylk/x-1", "main", [ConflictedFile("a.py", "contents")])
    assert "a.py (contents)" in str(error) and "Nothing was changed" in str(error)
    assert error.details is not None and error.details["files"] == [
        {"path": "a.py", "kind": "contents"}
    ]


def test_the_session_view_follows_the_metadata() -> None:
    plain = Session(
        name="s", workspace="/w", metadata={"worktree": {"off": "not a git repository"}}
    )
    assert isolation_line(plain) == "isolation: none (not a git repository)"
    assert merge_hint(plain) is None and branch_label(plain) is None
    info = {"repo_root": "/r", "git_dir": "/r/.git", "path": "/d/wt", "workspace": "/d/wt",
            "original_workspace": "/r", "branch": "sylk/s-1", "base": "main"}  # fmt: skip
    isolated = Session(name="s", workspace="/d/wt", metadata={"worktree": info})
    assert isolation_line(isolated) == "worktree: sylk/s-1 (from main)"
    assert "/session merge" in (merge_hint(isolated) or "")
    broken = Session(name="s", workspace="/w", metadata={"worktree": {"branch": 3}})
    assert isolation_line(broken) == "isolation: none (not set up yet)"
