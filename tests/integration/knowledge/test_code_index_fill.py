"""An empty index filled in batches on a helper thread holds what row-by-row writes hold."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from backend.knowledge.code import index as index_module
from backend.knowledge.code.index import CodeIndex
from tests.support.code_index import snapshot


def write_tree(root: Path, files: int) -> None:
    """Python with imports of several targets, TypeScript, a binary and a non-UTF-8 file."""
    for k in range(files):
        folder = root / f"pkg{k % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{k}.py").write_text(
            f"import os, sys\nfrom .mod_{k + 1} import first, second as alias\n\n"
            f"LIMIT_{k} = {k}\n\n\nclass Thing{k}:\n    def run(self) -> int:\n"
            f"        return {k}  # café ünïcode\n"
        )
    (root / "web.ts").write_text("import { a, b } from './x';\nexport class Shape {}\n")
    (root / "blob.py").write_bytes(b"\x00binary")
    (root / "latin.txt").write_bytes(b"caf\xe9 word\n")


@pytest.fixture(autouse=True)
def many_small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch every few files and a commit after every batch: the helper's hand-offs
    and commits run many times even on a small tree."""
    monkeypatch.setattr(index_module, "FLUSH_CHARS", 600)
    monkeypatch.setattr(index_module, "BATCH_SECONDS", 0.0)


def writer_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("code-index-writer")]


def test_an_empty_index_filled_in_batches_holds_what_row_by_row_writes(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, 60)
    filled = CodeIndex(root, tmp_path / "filled.db", workers=0)
    commits: list[tuple[int, int]] = []
    stats = filled.build(lambda done, total: commits.append((done, total)))
    # Row by row: the same files land in an index that is not empty, so each is written
    # on its own (the placeholder is dropped by the same build).
    (root / "placeholder.py").write_text("x = 1\n")
    row_by_row = CodeIndex(root, tmp_path / "row_by_row.db", workers=0)
    row_by_row.update_files(["placeholder.py"])
    (root / "placeholder.py").unlink()
    assert row_by_row.build().indexed == stats.indexed == 62  # the binary is not indexed
    assert snapshot(tmp_path / "filled.db") == snapshot(tmp_path / "row_by_row.db")
    assert len(commits) > 5 and commits[-1] == (63, 63)
    assert [done for done, _ in commits] == sorted(done for done, _ in commits)
    with sqlite3.connect(tmp_path / "filled.db") as conn:  # ids as inserts one by one give
        ids = [row[0] for row in conn.execute("SELECT id FROM files ORDER BY id")]
        orphans = conn.execute(
            "SELECT count(*) FROM import_targets WHERE import_id NOT IN (SELECT id FROM imports)"
        ).fetchone()[0]
    assert ids == list(range(1, 63)) and orphans == 0
    assert [h.path for h in filled.locate("Thing7")] == ["pkg2/mod_7.py"]
    assert "pkg0/mod_0.py" in {h.path for h in filled.search("café")}
    assert [h.path for h in filled.search("word")] == ["latin.txt"]
    assert writer_threads() == []
    filled.close()
    row_by_row.close()


def test_a_statement_failing_on_the_helper_fails_the_build_and_the_next_build_mends_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tree"
    write_tree(root, 40)
    index = CodeIndex(root, tmp_path / "index.db", workers=0)
    conn = index.reader()
    conn.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON symbols WHEN NEW.name = 'Thing30' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        index.build()
    assert writer_threads() == []
    indexed_before = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    assert 0 < indexed_before < 41  # the batches committed before the failure stay
    conn.execute("DROP TRIGGER refuse")
    index.build()  # picks up where the failed one stopped, indexes included
    complete = CodeIndex(root, tmp_path / "complete.db", workers=0)
    complete.build()
    assert snapshot(tmp_path / "index.db") == snapshot(tmp_path / "complete.db")
    indexes = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"symbols_name", "symbols_norm", "import_targets_target", "files_dir"} <= indexes
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL again
    index.close()
    complete.close()


def test_tiny_files_are_still_committed_as_time_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches end by the clock too: a tree of empty files (no text to fill a batch)
    still commits on the way, so readers see it grow."""
    monkeypatch.setattr(index_module, "FLUSH_CHARS", 10**9)
    root = tmp_path / "tree"
    for k in range(30):
        (root / f"pkg{k}").mkdir(parents=True)
        (root / f"pkg{k}" / "__init__.py").write_text("")
    commits: list[int] = []
    index = CodeIndex(root, tmp_path / "index.db", workers=0)
    assert index.build(lambda done, _: commits.append(done)).indexed == 30
    assert len(commits) > 5
    index.close()
