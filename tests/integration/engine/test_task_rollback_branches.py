"""A killed task's roll-back where it must hold back: real files, a real shadow repository,
the ledger written as the dead run's hooks would have left it.

- a file the task edited and someone else changed since is left alone and named (nothing
  the other writer did is lost), while the task's other file is put back;
- an edit written down but never landed (killed between the two hooks) is the task's
  own: if it reached the file, the file is put back; if it never did, nothing is touched;
- an edit with no checkpoint to go back to is left and said to be.
"""

from __future__ import annotations

from pathlib import Path

from backend.checkpoints.task_ledger import TaskLedger, current_oid, task_key
from backend.engine.build import EngineParts
from backend.engine.plan_runs.task_rollback import TaskRollback

TASK = task_key("p1", "e1")


async def _setup(parts: EngineParts, workspace: Path) -> tuple[str, TaskLedger, str]:
    """A session, a ledger, and the checkpoint of the workspace before the task ran."""
    (workspace / "app.py").write_text("x = 1\n")
    (workspace / "util.py").write_text("y = 1\n")
    session = await parts.sessions.create_session("rollback")
    ledger = TaskLedger(parts.config.data_dir / "edits.db")
    base = await parts.checkpoints.snapshot(session.id, workspace)
    return session.id, ledger, base.tree


async def _edit(ledger: TaskLedger, sid: str, workspace: Path, path: str, *, text: str,
                base: str) -> None:  # fmt: skip
    """One edit by the task, as its before and after hooks write it down."""
    await ledger.touching(sid, TASK, path, base)
    (workspace / path).write_text(text)
    await ledger.touched(sid, TASK, path, current_oid(workspace, path))


async def _notes(parts: EngineParts, sid: str) -> list[str]:
    return [str(m.payload.get("text", "")) for m in await parts.sessions.transcript(sid)
            if m.payload.get("rollback") is not None]  # fmt: skip


async def test_a_file_changed_since_by_someone_else_is_left_and_named(
    engine_parts: EngineParts, workspace: Path
) -> None:
    parts = engine_parts
    try:
        sid, ledger, base = await _setup(parts, workspace)
        await _edit(ledger, sid, workspace, "app.py", text="x = 2\n", base=base)
        await _edit(ledger, sid, workspace, "util.py", text="y = 2\n", base=base)
        (workspace / "util.py").write_text("y = 2  # the user's own line\n")  # after the kill

        await TaskRollback(parts, ledger)(sid, "p1", ["e1"])

        assert (workspace / "app.py").read_text() == "x = 1\n"  # the task's: put back
        assert (workspace / "util.py").read_text() == "y = 2  # the user's own line\n"
        [note] = await _notes(parts, sid)
        assert note == (
            "Plan p1, task e1: its interrupted attempt's changes were rolled back before it "
            "runs again: restored app.py; left as they are, changed since by someone else: "
            "util.py"
        )
        assert ledger.files(sid, TASK) == []  # the next attempt starts its own record
    finally:
        await parts.aclose()


async def test_an_edit_written_down_but_cut_before_its_after_hook_is_the_tasks_own(
    engine_parts: EngineParts, workspace: Path
) -> None:
    parts = engine_parts
    try:
        sid, ledger, base = await _setup(parts, workspace)
        await ledger.touching(sid, TASK, "app.py", base)  # landed; killed before `touched`
        (workspace / "app.py").write_text("x = 1\nx += 1\n")
        await ledger.touching(sid, TASK, "new.py", base)  # created; killed before `touched`
        (workspace / "new.py").write_text("z = 0\n")
        await ledger.touching(sid, TASK, "util.py", base)  # killed before it landed at all

        await TaskRollback(parts, ledger)(sid, "p1", ["e1"])

        assert (workspace / "app.py").read_text() == "x = 1\n"
        assert not (workspace / "new.py").exists()
        assert (workspace / "util.py").read_text() == "y = 1\n"  # untouched: nothing to do
        [note] = await _notes(parts, sid)
        assert note.endswith("restored app.py; removed new.py (it had created them)")
    finally:
        await parts.aclose()


async def test_an_edit_without_a_checkpoint_is_left_and_said(
    engine_parts: EngineParts, workspace: Path
) -> None:
    parts = engine_parts
    try:
        sid, ledger, _ = await _setup(parts, workspace)
        await ledger.touching(sid, TASK, "app.py", None)  # the turn had no "before" snapshot
        (workspace / "app.py").write_text("x = 3\n")

        await TaskRollback(parts, ledger)(sid, "p1", ["e1"])

        assert (workspace / "app.py").read_text() == "x = 3\n"
        [note] = await _notes(parts, sid)
        assert note == (
            "Plan p1, task e1: its interrupted attempt's changes were not rolled back before "
            "it runs again: not rolled back (no checkpoint of them): app.py"
        )
    finally:
        await parts.aclose()
