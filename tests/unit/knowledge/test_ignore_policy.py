"""The one ignore policy of the code index and the file watcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.watch.ignore import SKIP_DIRS, IgnorePolicy, is_ignore_file

SEED_IGNORE_PATHS = (
    ".git", "node_modules", "vendor", "__pycache__", ".idea", ".vscode", "dist", "build",
    ".cache",
)  # fmt: skip


def test_the_seeds_ignore_list_is_all_there() -> None:
    assert set(SEED_IGNORE_PATHS) <= SKIP_DIRS


@pytest.mark.parametrize(
    ("rel", "is_dir", "left_out"),
    [
        ("a.py", False, False),
        ("build", True, True),
        ("x/build/y.py", False, True),
        ("a/b.png", False, True),
        ("assets.png/x.py", False, False),  # a directory's name is not a file type
        ("a/.x.py.sylk-tmp", False, True),
        ("debug.log", False, True),
        ("logs/debug.log", False, True),
        ("vendor", True, True),
        ("vendor.py", False, False),
        (".vscode/settings.json", False, True),
        ("src/.cache", True, True),
        ("out", True, False),  # only .gitignore says so, and skips() reads no file
    ],
)
def test_skips_by_name_alone(rel: str, is_dir: bool, left_out: bool) -> None:
    assert IgnorePolicy(Path("/nonexistent"), ["*.log"]).skips(rel, is_dir) is left_out


def test_a_view_reads_each_gitignore_once_and_a_new_view_sees_an_edit(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.js").write_text("1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "keep.py").write_text("1")
    (tmp_path / "src" / "gen.py").write_text("1")
    (tmp_path / "src" / ".gitignore").write_text("gen.py\n")
    (tmp_path / ".gitignore").write_text("out/\n")
    policy = IgnorePolicy(tmp_path)
    view = policy.view()
    assert [rel for rel, _ in view.walk()] == [".gitignore", "src/.gitignore", "src/keep.py"]
    assert view.ignores("out/a.js") and view.ignores("out", is_dir=True)
    assert [rel for rel, _ in view.walk("src")] == ["src/.gitignore", "src/keep.py"]
    assert list(view.walk("out")) == []
    (tmp_path / ".gitignore").write_text("!out/\n")
    assert view.ignores("out/a.js")  # this view already read the old rules
    assert not policy.view().ignores("out/a.js")
    assert is_ignore_file("src/.gitignore") and not is_ignore_file("src/gitignore.py")
