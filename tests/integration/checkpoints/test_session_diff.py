"""/diff: the workspace now against the session's start, after several turns, bounded."""

from __future__ import annotations

from pathlib import Path

from backend.checkpoints.answers import diff_text
from backend.checkpoints.service import Checkpoints

SESSION = "d1ff"


async def _turn(checkpoints: Checkpoints, workspace: Path, change: dict[str, bytes | None]) -> None:
    async with checkpoints.turn(SESSION, "engineer", workspace) as turn:
        await turn.before_change()
        for rel, data in change.items():
            if data is None:
                (workspace / rel).unlink()
            else:
                (workspace / rel).write_bytes(data)


async def test_diff_after_several_turns_shows_every_change_since_the_start(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    assert not (await checkpoints.diff(SESSION, project)).started
    await _turn(checkpoints, project, {"src/app.py": b"def main():\n    return 2\n"})
    await _turn(checkpoints, project, {"NOTES.md": None, "logo.png": b"\x89PNG\x00\x01\x02"})
    await _turn(checkpoints, project, {"src/util.py": b"X = 3\n"})
    diff = await checkpoints.diff(SESSION, project)
    assert [(f.path, f.status) for f in diff.files] == [
        ("NOTES.md", "deleted"), ("logo.png", "added"),
        ("src/app.py", "modified"), ("src/util.py", "modified"),
    ]  # fmt: skip
    assert diff.shown == 4
    assert "-    return 1\n+    return 2" in diff.patch
    assert "-X = 1\n+X = 3" in diff.patch
    assert "binary changed" in diff.patch
    text = diff_text(diff)
    assert text.startswith("4 files changed since this session's start:")


async def test_a_large_diff_is_cut_at_a_file_and_says_how_many_more(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    await _turn(checkpoints, project, {f"gen{n:02}.txt": b"line\n" * 200 for n in range(20)})
    diff = await checkpoints.diff(SESSION, project, limit=4096)
    assert len(diff.files) == 20 and 0 < diff.shown < 20
    assert diff.patch.count("diff --git") == diff.shown
    assert len(diff.patch.encode()) <= 4096
    assert f"… {20 - diff.shown} more files" in diff_text(diff)


async def test_undoing_everything_leaves_an_empty_diff(data_dir: Path, project: Path) -> None:
    checkpoints = Checkpoints(data_dir)
    await _turn(checkpoints, project, {"src/app.py": b"x\n"})
    await checkpoints.undo(SESSION, project)
    diff = await checkpoints.diff(SESSION, project)
    assert diff.started and diff.files == []
    assert "as it was" in diff_text(diff)
