"""Checkpoints with real git on real files: a turn's changes undone exactly, a user's
later edit never lost, undo walking back turn by turn, and surviving a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.checkpoints.records import NothingToUndoError, UndoConflictError
from backend.checkpoints.service import Checkpoints, current_turn
from tests.integration.checkpoints.conftest import files_of

SESSION = "5e55104a"


async def _turn(
    checkpoints: Checkpoints, workspace: Path, turn_id: str, change: dict[str, str | None]
) -> None:
    """One agent turn: its first change announced, then files written (None: deleted)."""
    async with checkpoints.turn(SESSION, "engineer", workspace) as turn:
        assert current_turn() is turn
        await turn.before_change()
        for rel, text in change.items():
            path = workspace / rel
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        turn.turn_id = turn_id
    assert current_turn() is None


async def test_undo_restores_exactly_the_state_before_the_turn(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    before = files_of(project)
    await _turn(checkpoints, project, "t1", {
        "src/app.py": "def main():\n    return 2\n", "run.sh": "#!/bin/sh\necho bye\n",
        "src/new/helper.py": "H = 1\n", "NOTES.md": None,
    })  # fmt: skip
    assert files_of(project) != before
    outcome = await checkpoints.undo(SESSION, project)
    assert files_of(project) == before  # content, modes (run.sh stays 0o755) and the file set
    assert not (project / "src" / "new").exists()
    assert outcome.restored == ["run.sh", "src/app.py"]
    assert outcome.removed == ["src/new/helper.py"]
    assert outcome.recreated == ["NOTES.md"]
    assert outcome.turn_id == "t1" and outcome.role == "engineer" and outcome.remaining == 0
    with pytest.raises(NothingToUndoError):
        await checkpoints.undo(SESSION, project)


async def test_a_file_changed_since_the_turn_makes_undo_refuse_and_change_nothing(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    await _turn(checkpoints, project, "t1", {"src/app.py": "agent's\n", "src/util.py": "Y\n",
                                             "made.py": "m\n"})  # fmt: skip
    (project / "src" / "util.py").write_text("the user's own edit\n")
    (project / "made.py").unlink()
    now = files_of(project)
    with pytest.raises(UndoConflictError) as caught:
        await checkpoints.undo(SESSION, project)
    assert caught.value.paths == ["made.py", "src/util.py"]
    assert "changed since the agent's turn: made.py, src/util.py" in str(caught.value)
    assert files_of(project) == now
    # Put back as the turn left them, the undo goes through.
    (project / "src" / "util.py").write_text("Y\n")
    (project / "made.py").write_text("m\n")
    await checkpoints.undo(SESSION, project)
    assert (project / "src" / "util.py").read_text() == "X = 1\n"


async def test_undo_twice_walks_back_and_user_edits_between_turns_stay(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    start = files_of(project)
    await _turn(checkpoints, project, "t1", {"src/app.py": "one\n"})
    (project / "NOTES.md").write_text("the user wrote this between the turns\n")
    after_user = files_of(project)
    await _turn(checkpoints, project, "t2", {"src/app.py": "two\n", "src/util.py": "two\n"})
    first = await checkpoints.undo(SESSION, project)
    assert first.turn_id == "t2" and first.remaining == 1
    assert files_of(project) == after_user
    second = await checkpoints.undo(SESSION, project)
    assert second.turn_id == "t1" and second.remaining == 0
    assert (project / "NOTES.md").read_text() == "the user wrote this between the turns\n"
    assert files_of(project) == {**start, "NOTES.md": after_user["NOTES.md"]}


async def test_a_turn_that_changes_nothing_leaves_no_checkpoint(
    data_dir: Path, project: Path
) -> None:
    checkpoints = Checkpoints(data_dir)
    async with checkpoints.turn(SESSION, "architect", project) as turn:
        turn.turn_id = "reads-only"  # never announced a change: no snapshot at all
    assert turn.before is None and turn.recorded is None
    await _turn(checkpoints, project, "t1", {"src/app.py": "def main():\n    return 1\n"})
    assert await checkpoints.entries(SESSION, project) != []
    assert [e.kind for e in await checkpoints.entries(SESSION, project)] == ["start"]


async def test_a_new_service_on_the_same_data_dir_still_undoes(
    data_dir: Path, project: Path
) -> None:
    before = files_of(project)
    await _turn(Checkpoints(data_dir), project, "t1", {"src/app.py": "x\n", "new.txt": "n\n"})
    restarted = Checkpoints(data_dir)
    outcome = await restarted.undo(SESSION, project)
    assert outcome.turn_id == "t1"
    assert files_of(project) == before


async def test_overlapping_turns_never_share_a_change(data_dir: Path, project: Path) -> None:
    checkpoints = Checkpoints(data_dir)
    first = checkpoints.turn(SESSION, "engineer", project)
    second = checkpoints.turn(SESSION, "tester", project)
    await first.before_change()
    await second.before_change()
    (project / "src" / "util.py").write_text("tester's\n")
    second.turn_id = "tester-turn"
    await second.finish()
    (project / "src" / "app.py").write_text("engineer's\n")
    first.turn_id = "engineer-turn"
    await first.finish()
    undone = await checkpoints.undo(SESSION, project)
    assert undone.turn_id == "engineer-turn" and undone.restored == ["src/app.py"]
    assert (project / "src" / "util.py").read_text() == "tester's\n"
    assert (await checkpoints.undo(SESSION, project)).restored == ["src/util.py"]


async def test_sessions_keep_separate_checkpoints(data_dir: Path, project: Path) -> None:
    checkpoints = Checkpoints(data_dir)
    await _turn(checkpoints, project, "t1", {"src/app.py": "mine\n"})
    with pytest.raises(NothingToUndoError):
        await checkpoints.undo("another-session", project)
