"""FileWatcher against real files, real inotify events and a real git checkout."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from backend.knowledge.watch.hashes import scan_workspace
from backend.knowledge.watch.watcher import ChangeBatch, FileWatcher

TIMEOUT = 5.0


class Recorder:
    """Collects batches; tests wait on conditions over them, never on the clock."""

    def __init__(self) -> None:
        self.batches: list[ChangeBatch] = []
        self._arrived = asyncio.Event()

    async def __call__(self, batch: ChangeBatch) -> None:
        self.batches.append(batch)
        self._arrived.set()

    async def wait_for(
        self, predicate: Callable[[ChangeBatch], bool], within: float = TIMEOUT
    ) -> ChangeBatch:
        async with asyncio.timeout(within):
            seen = 0
            while True:
                for batch in self.batches[seen:]:
                    if predicate(batch):
                        return batch
                seen = len(self.batches)
                self._arrived.clear()
                await self._arrived.wait()

    def mentions(self, rel: str) -> list[ChangeBatch]:
        return [b for b in self.batches if rel in b.paths]


async def sentinel(root: Path, rec: Recorder, name: str = "sentinel.txt") -> ChangeBatch:
    """Write a marker file and wait for its batch: everything done before it has
    been delivered by then, since events arrive in order."""
    marker = root / name
    marker.write_text(f"marker {len(rec.batches)} {os.urandom(4).hex()}")
    return await rec.wait_for(lambda b: name in b.paths)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "a.py").write_text("print('a')\n")
    (root / "pkg" / "b.py").write_text("print('b')\n")
    (root / "pkg" / "c.py").write_text("print('c')\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


@pytest.fixture
async def watched(workspace: Path) -> AsyncIterator[tuple[FileWatcher, Recorder]]:
    rec = Recorder()
    watcher = FileWatcher(workspace, on_changes=rec, health_interval_s=0.2)
    await watcher.start()
    try:
        yield watcher, rec
    finally:
        await watcher.aclose()


async def test_initial_scan_skips_ignored(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, _ = watched
    assert set(watcher.known_hashes) == {"a.py", "pkg/b.py", "pkg/c.py"}
    assert watcher.healthy


async def test_edit_reports_modified(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    _, rec = watched
    (workspace / "a.py").write_text("print('A')\n")
    batch = await rec.wait_for(lambda b: "a.py" in b.paths)
    assert batch.modified == {"a.py"}
    assert not batch.created and not batch.deleted and not batch.bulk


async def test_same_content_and_touch_report_nothing(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    _, rec = watched
    target = workspace / "a.py"
    target.write_text(target.read_text())
    os.utime(target, (1_000_000, 1_000_000))
    os.utime(workspace / "pkg" / "b.py")
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    await sentinel(workspace, rec)
    assert all(b.paths == {"sentinel.txt"} for b in rec.batches)


async def test_create_and_delete(workspace: Path, watched: tuple[FileWatcher, Recorder]) -> None:
    _, rec = watched
    (workspace / "pkg" / "new.py").write_text("x = 1\n")
    batch = await rec.wait_for(lambda b: "pkg/new.py" in b.paths)
    assert batch.created == {"pkg/new.py"}
    (workspace / "pkg" / "new.py").unlink()
    batch = await rec.wait_for(lambda b: b.deleted == {"pkg/new.py"})
    assert not batch.created and not batch.modified


async def test_rename_reports_source_deleted_destination_created(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, rec = watched
    (workspace / "a.py").rename(workspace / "b.py")
    batch = await rec.wait_for(lambda b: "b.py" in b.paths)
    assert batch.deleted == {"a.py"}
    assert batch.created == {"b.py"}
    assert "a.py" not in watcher.known_hashes


async def test_atomic_save_reports_target_only(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    _, rec = watched
    target = workspace / "pkg" / "b.py"
    tmp = workspace / "pkg" / ".b.py.tmp-4821"
    tmp.write_text("print('saved')\n")
    os.replace(tmp, target)
    batch = await rec.wait_for(lambda b: "pkg/b.py" in b.paths)
    assert batch.modified == {"pkg/b.py"}
    assert not batch.created and not batch.deleted
    await sentinel(workspace, rec)
    assert not rec.mentions("pkg/.b.py.tmp-4821")


async def test_directory_move_and_delete_expand_to_files(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, rec = watched
    (workspace / "pkg").rename(workspace / "lib")
    await rec.wait_for(lambda b: "lib/c.py" in b.paths)
    await sentinel(workspace, rec)
    assert {"pkg/b.py", "pkg/c.py"} <= set().union(*(b.deleted for b in rec.batches))
    assert {"lib/b.py", "lib/c.py"} <= set().union(*(b.created for b in rec.batches))
    for name in ("b.py", "c.py"):
        (workspace / "lib" / name).unlink()
    (workspace / "lib").rmdir()
    await rec.wait_for(lambda b: "lib/c.py" in b.deleted and "lib/b.py" in b.deleted)
    assert set(watcher.known_hashes) == {"a.py", "sentinel.txt"}


async def test_burst_of_writes_is_one_change(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    _, rec = watched
    target = workspace / "a.py"
    for i in range(50):
        target.write_text(f"version = {i}\n")
    await rec.wait_for(lambda b: "a.py" in b.paths)
    await sentinel(workspace, rec)
    assert len(rec.mentions("a.py")) == 1


async def test_many_files_at_once_is_bulk(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(150):
        (root / f"f{i:03}.txt").write_text(f"old {i}")
    rec = Recorder()
    async with FileWatcher(root, on_changes=rec, batch_threshold=100) as watcher:
        for i in range(150):
            (root / f"f{i:03}.txt").write_text(f"new {i}")
        await rec.wait_for(lambda b: b.bulk)
        await rec.wait_for(lambda _: watcher.known_hashes == scan_workspace(root))
        assert sum(len(b.modified) for b in rec.batches) == 150
        assert not any(b.created or b.deleted for b in rec.batches)


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


@pytest.mark.slow
async def test_git_checkout_leaves_no_stale_hashes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for d in range(20):
        sub = repo / f"d{d:02}"
        sub.mkdir()
        for i in range(100):
            (sub / f"f{i:03}.txt").write_text(f"main {d} {i}\n")
    (repo / "only_main.txt").write_text("main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main")
    git(repo, "checkout", "-q", "-b", "other")
    for d in range(20):
        for i in range(100):
            (repo / f"d{d:02}" / f"f{i:03}.txt").write_text(f"other {d} {i}\n")
    (repo / "only_main.txt").unlink()
    (repo / "extra").mkdir()
    (repo / "extra" / "only_other.txt").write_text("other\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "other")
    git(repo, "checkout", "-q", "main")

    rec = Recorder()
    async with FileWatcher(repo, on_changes=rec) as watcher:
        assert len(watcher.known_hashes) == 2001
        await asyncio.to_thread(git, repo, "checkout", "-q", "other")
        await rec.wait_for(lambda b: b.bulk)
        fresh = scan_workspace(repo)
        await rec.wait_for(lambda _: watcher.known_hashes == fresh, within=10)
        # Nothing left in flight either: a marker goes through after everything else.
        await sentinel(repo, rec, "zz-marker.txt")
        fresh = scan_workspace(repo)
        assert watcher.known_hashes == fresh
        assert "only_main.txt" in set().union(*(b.deleted for b in rec.batches))
        assert "extra/only_other.txt" in set().union(*(b.created for b in rec.batches))


async def test_observer_death_triggers_rescan(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, rec = watched
    observer = watcher._observer
    assert observer is not None
    observer.stop()
    observer.join(timeout=TIMEOUT)
    assert not watcher.healthy
    (workspace / "pkg" / "c.py").write_text("changed while blind\n")
    batch = await rec.wait_for(lambda b: "pkg/c.py" in b.paths)
    assert batch.modified == {"pkg/c.py"}
    assert watcher.restarts == 1
    assert watcher.healthy  # restarted before the rescan that reported the change
    (workspace / "a.py").write_text("seen again\n")
    await rec.wait_for(lambda b: "a.py" in b.modified)


async def test_explicit_rescan_reports_nothing_when_in_sync(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, _ = watched
    assert await watcher.rescan() is None


async def test_kernel_overflow_triggers_rescan(workspace: Path) -> None:
    rec = Recorder()
    async with FileWatcher(workspace, on_changes=rec, health_interval_s=0) as watcher:
        observer = watcher._observer
        assert observer is not None
        observer.stop()  # blind, so only the rescan can see the edit below
        observer.join(timeout=TIMEOUT)
        (workspace / "a.py").write_text("lost event\n")
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        batch = await rec.wait_for(lambda b: "a.py" in b.paths)
        assert batch.modified == {"a.py"}
        assert watcher.restarts == 1 and watcher.healthy


async def test_extra_ignore_patterns(workspace: Path) -> None:
    (workspace / "debug.log").write_text("x")
    rec = Recorder()
    async with FileWatcher(workspace, on_changes=rec, ignore=["*.log", "build/*"]) as watcher:
        assert "debug.log" not in watcher.known_hashes
        (workspace / "build").mkdir()
        (workspace / "build" / "out.bin").write_bytes(b"\0")
        (workspace / "debug.log").write_text("y")
        (workspace / "node_modules" / "m").mkdir(parents=True)
        (workspace / "node_modules" / "m" / "i.js").write_text("1")
        await sentinel(workspace, rec)
        assert all(b.paths == {"sentinel.txt"} for b in rec.batches)


async def test_gitignored_and_listed_directories_are_filtered_before_counting(
    workspace: Path,
) -> None:
    (workspace / ".gitignore").write_text("out/\n*.tmp\n")
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text("{}\n")
    rec = Recorder()
    async with FileWatcher(workspace, on_changes=rec, batch_threshold=100) as watcher:
        assert set(watcher.known_hashes) == {".gitignore", "a.py", "pkg/b.py", "pkg/c.py"}
        for directory in ("out", "build", "vendor", ".cache"):
            (workspace / directory / "deep").mkdir(parents=True)
            for i in range(150):
                (workspace / directory / "deep" / f"f{i}.js").write_text(f"{i}\n")
        (workspace / "pkg" / "scratch.tmp").write_text("x")
        (workspace / ".vscode" / "settings.json").write_text('{"a": 1}\n')
        await sentinel(workspace, rec)
        assert [b.paths for b in rec.batches] == [{"sentinel.txt"}]
        assert not any(b.bulk for b in rec.batches)


async def test_an_extra_pattern_and_a_shared_policy_are_one_or_the_other(
    workspace: Path,
) -> None:
    from backend.knowledge.watch.ignore import IgnorePolicy
    from backend.knowledge.watch.watcher import FileWatcherError

    with pytest.raises(FileWatcherError):
        FileWatcher(
            workspace, on_changes=Recorder(), ignore=["*.log"], policy=IgnorePolicy(workspace)
        )


async def test_an_ignore_file_edit_hides_and_shows_files_that_did_not_change(
    workspace: Path, watched: tuple[FileWatcher, Recorder]
) -> None:
    watcher, rec = watched
    (workspace / ".gitignore").write_text("pkg/\n")
    batch = await rec.wait_for(lambda b: ".gitignore" in b.paths)
    assert batch.created == {".gitignore"}
    assert batch.deleted == {"pkg/b.py", "pkg/c.py"} and not batch.modified
    assert set(watcher.known_hashes) == {".gitignore", "a.py"} == set(scan_workspace(workspace))
    (workspace / "pkg" / "b.py").write_text("hidden edit\n")  # ignored now: no news
    (workspace / "pkg" / "sub").mkdir()
    (workspace / "pkg" / "sub" / ".gitignore").write_text("*.py\n")
    await sentinel(workspace, rec)
    assert len(rec.mentions("pkg/b.py")) == 1  # its leaving, not the edit
    assert not rec.mentions("pkg/sub/.gitignore")
    (workspace / ".gitignore").write_text("*.log\n")
    batch = await rec.wait_for(lambda b: "pkg/b.py" in b.created)
    assert batch.created == {"pkg/b.py", "pkg/c.py", "pkg/sub/.gitignore"}
    assert batch.modified == {".gitignore"}
    assert watcher.known_hashes == scan_workspace(workspace)
