"""A worktree's code index seeded from its base tree's: only what differs is parsed.

Real git worktrees, real SQLite files; the seeded index must answer exactly like
an index built from scratch on the same worktree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from backend.knowledge.code import CodeIndex, seed_index_from
from backend.knowledge.code.live import index_path_for
from tests.support.code_index import snapshot

GIT_ENV = {
    "PATH": os.environ["PATH"],
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    (root / "pkg").mkdir(parents=True)
    for k in range(12):
        (root / "pkg" / f"mod_{k}.py").write_text(
            f"import os\nfrom . import mod_{(k + 1) % 12}\n\n"
            f"CONST_{k} = {k}\n\n\nclass Thing{k}:\n    def run(self) -> int:\n"
            f"        return {k}\n\n\ndef helper_{k}() -> None:\n    pass\n"
        )
    (root / "web.ts").write_text("export function shout(s: string) {\n  return s;\n}\n")
    (root / "gone.py").write_text("def doomed():\n    pass\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_a_worktree_reindexes_exactly_its_changed_added_and_deleted_files(
    base: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    built = CodeIndex(base, index_path_for(data, base), protected=(data,)).build()
    assert built.indexed == 14
    wt = tmp_path / "wt"
    git(base, "worktree", "add", "-q", "-b", "session-1", str(wt))
    (wt / "pkg" / "mod_3.py").write_text("def replaced() -> None:\n    pass\n")
    (wt / "pkg" / "fresh.py").write_text("class Fresh:\n    pass\n")
    (wt / "gone.py").unlink()

    stats = seed_index_from(base, wt, data)

    assert stats.seeded
    assert sorted(stats.reindexed) == ["pkg/fresh.py", "pkg/mod_3.py"]
    assert stats.removed == 1
    assert stats.files == 14
    scratch = tmp_path / "scratch.db"
    CodeIndex(wt, scratch, protected=(data,)).build()
    assert snapshot(index_path_for(data, wt)) == snapshot(scratch)
    index = CodeIndex(wt, index_path_for(data, wt))
    assert [h.path for h in index.locate("Fresh")] == ["pkg/fresh.py"]
    assert index.locate("doomed") == []
    assert index.locate("Thing3") == []
    assert [h.path for h in index.locate("Thing4")] == ["pkg/mod_4.py"]
    # the base index is untouched
    assert [h.path for h in CodeIndex(base, index_path_for(data, base)).locate("doomed")] == [
        "gone.py"
    ]


def test_a_resumed_worktree_keeps_its_own_index(base: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    CodeIndex(base, index_path_for(data, base)).build()
    wt = tmp_path / "wt"
    git(base, "worktree", "add", "-q", "-b", "session-1", str(wt))
    first = seed_index_from(base, wt, data)
    (wt / "later.py").write_text("def later():\n    pass\n")
    again = seed_index_from(base, wt, data)
    assert first.seeded and first.reindexed == ()
    assert not again.seeded
    assert again.reindexed == ("later.py",)


def test_without_a_base_index_the_worktree_is_built_from_scratch(
    base: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    wt = tmp_path / "wt"
    git(base, "worktree", "add", "-q", "-b", "session-1", str(wt))
    stats = seed_index_from(base, wt, data)
    assert not stats.seeded
    assert len(stats.reindexed) == 14
    assert (index_path_for(data, wt).stat().st_mode & 0o777) == 0o600


def test_seeding_runs_nothing_the_repository_plants(base: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    marker = tmp_path / "ran"
    hook = base / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    monitor = tmp_path / "fsmonitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\n")
    monitor.chmod(0o755)
    CodeIndex(base, index_path_for(data, base)).build()
    wt = tmp_path / "wt"
    git(base, "worktree", "add", "-q", "--no-checkout", "-b", "session-1", str(wt))
    git(base, "config", "core.fsmonitor", str(monitor))
    for path in base.glob("*.py"):
        (wt / path.name).write_text(path.read_text())
    stats = seed_index_from(base, wt, data)
    assert stats.seeded
    assert not marker.exists()
