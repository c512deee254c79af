"""Restoring files through directory descriptors: exact content and modes, links kept as
links, and nothing ever written through a symlink that leads out of the workspace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from backend.checkpoints.restore import Restoration, RestoreError, restore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_writes_deletes_and_keeps_modes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "made.py").write_text("new\n")
    (root / "run.sh").write_text("echo changed\n")
    os.chmod(root / "run.sh", 0o700)
    done = restore(
        root,
        [
            Restoration("pkg/made.py", None),
            Restoration("run.sh", "100755", b"echo before\n"),
            Restoration("gone/deep/file.txt", "100644", b"back\n"),
            Restoration("link", "120000", b"run.sh"),
        ],
        keep_dirs={"gone", "gone/deep"},
    )
    assert sorted(done) == ["gone/deep/file.txt", "link", "pkg/made.py", "run.sh"]
    assert not (root / "pkg").exists()  # emptied, and the target state has no such dir
    assert (root / "run.sh").read_bytes() == b"echo before\n"
    assert _mode(root / "run.sh") & 0o100  # still executable, its other bits kept
    assert (root / "gone/deep/file.txt").read_text() == "back\n"
    assert os.readlink(root / "link") == "run.sh"
    assert not [p for p in root.rglob("*sylk-undo*")]


def test_a_directory_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me\n")
    (root / "src").symlink_to(outside)  # was a directory when the checkpoint was taken
    with pytest.raises(RestoreError) as caught:
        restore(root, [Restoration("src/victim.txt", "100644", b"pwned\n")], keep_dirs=set())
    assert "not followed" in str(caught.value)
    assert (outside / "victim.txt").read_text() == "keep me\n"
    with pytest.raises(RestoreError):
        restore(root, [Restoration("src/victim.txt", None)], keep_dirs=set())
    assert (outside / "victim.txt").exists()


def test_a_file_that_is_a_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "bashrc"
    root.mkdir()
    outside.write_text("mine\n")
    (root / "settings.py").symlink_to(outside)
    restore(root, [Restoration("settings.py", "100644", b"x = 1\n")], keep_dirs=set())
    assert outside.read_text() == "mine\n"
    assert not (root / "settings.py").is_symlink()
    assert (root / "settings.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", ".git/hooks/pre-commit", "a//b"])
def test_paths_no_checkpoint_may_hold_are_refused(tmp_path: Path, path: str) -> None:
    (tmp_path / "ws").mkdir()
    with pytest.raises(RestoreError):
        restore(tmp_path / "ws", [Restoration(path, "100644", b"x")], keep_dirs=set())
    assert not (tmp_path / "escape.txt").exists()


def test_protected_paths_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".sylk").mkdir(parents=True)
    with pytest.raises(RestoreError) as caught:
        restore(
            root,
            [Restoration(".sylk/sylk.db", "100644", b"x")],
            keep_dirs=set(),
            protected=(".sylk",),
        )
    assert "protected" in str(caught.value)
    assert not (root / ".sylk" / "sylk.db").exists()


def test_a_directory_with_files_where_a_file_goes_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "name").mkdir(parents=True)
    (root / "name" / "child.txt").write_text("user's\n")
    with pytest.raises(RestoreError) as caught:
        restore(root, [Restoration("name", "100644", b"x")], keep_dirs=set())
    assert caught.value.error_kind.value == "conflict"
    assert (root / "name" / "child.txt").read_text() == "user's\n"
