"""A full build in worker processes writes what a build in one thread writes."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from backend.knowledge.code import index as index_module
from backend.knowledge.code.index import PARALLEL_MIN_FILES, CodeIndex
from tests.support.code_index import snapshot


def write_tree(root: Path, files: int) -> None:
    for k in range(files):
        folder = root / f"pkg{k % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{k}.py").write_text(
            f"import os\nfrom . import mod_{k + 1}\n\nLIMIT_{k} = {k}\n\n\n"
            f"class Thing{k}:\n    def run(self) -> int:\n        return {k}\n"
        )
    (root / "web.ts").write_text("export class Shape {\n  area() {\n    return 1;\n  }\n}\n")
    (root / "blob.py").write_bytes(b"\x00binary")


@pytest.fixture(autouse=True)
def small_trees_use_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These trees are a few kilobytes: below the bytes that make workers pay."""
    monkeypatch.setattr(index_module, "PARALLEL_MIN_BYTES", 0)


def test_workers_write_exactly_what_one_thread_writes(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, PARALLEL_MIN_FILES + 20)
    inline = CodeIndex(root, tmp_path / "inline.db", workers=0).build()
    parallel_index = CodeIndex(root, tmp_path / "parallel.db", workers=2)
    parallel = parallel_index.build()
    assert parallel.indexed == inline.indexed == PARALLEL_MIN_FILES + 21
    assert snapshot(tmp_path / "parallel.db") == snapshot(tmp_path / "inline.db")
    assert [h.path for h in parallel_index.locate("Thing7")] == ["pkg0/mod_7.py"]
    with sqlite3.connect(tmp_path / "parallel.db") as conn:
        indexes = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"symbols_name", "symbols_norm", "import_targets_target", "files_dir"} <= indexes
    assert parallel_index.build().indexed == 0  # nothing changed: nothing re-read


def test_a_second_build_reparses_only_what_changed(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, PARALLEL_MIN_FILES + 5)
    index = CodeIndex(root, tmp_path / "index.db", workers=2)
    index.build()
    (root / "pkg3" / "mod_3.py").write_text("def changed():\n    pass\n")
    (root / "pkg0" / "mod_0.py").touch()  # new mtime, same bytes: read and hashed only
    stats = index.build()
    assert stats.reindexed == ("pkg3/mod_3.py",)
    assert [h.path for h in index.locate("changed")] == ["pkg3/mod_3.py"]


def test_workers_that_cannot_start_leave_the_build_to_this_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    write_tree(root, PARALLEL_MIN_FILES + 1)
    CodeIndex(root, tmp_path / "inline.db", workers=0).build()
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    stats = CodeIndex(root, tmp_path / "fallback.db", workers=2).build()
    assert stats.indexed == PARALLEL_MIN_FILES + 2
    assert snapshot(tmp_path / "fallback.db") == snapshot(tmp_path / "inline.db")
