"""Snapshot and restore of a session's whole workflow state, on real engines.

A scripted plan runs until its second node is running; a snapshot is taken there; the
DAG's state and the session are then changed by hand (as a later run would have left
them); restoring puts both back, and a restarted engine runs the DAG on from the
snapshot: the node that had passed is not run again. Also: restore refused while the
DAG runs, the Guide's routes and the loaded ops coming back, and bad snapshot ids and
corrupt or newer documents answered with typed errors.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backend.engine import Engine
from backend.errors import ErrorKind
from backend.orchestration import DagStatus, NodeRecord, NodeStatus
from backend.sessions.phases import SessionPhase
from backend.sessions.snapshots import (
    SessionRunningError,
    SnapshotNotFoundError,
    SnapshotUnreadableError,
)
from backend.skills.models import SkillTier
from tests.integration.orchestration.plan_runs import (
    HANG_TEXT,
    Run,
    architect_proposes,
    node,
    plan,
    script,
)
from tests.integration.plans.conftest import say
from tests.support.polling import until


async def snapshot_mid_dag(data_dir: Path, workspace: Path) -> str:
    """Run the plan until t2 runs, snapshot there (restore and close refused), stop."""
    first = Run(data_dir, workspace)
    try:
        sid = await first.session_with_plan()
        await say(first.engine, sid, "/plan approve p1")
        await until(lambda: "running" in first.node_moves("t2"))
        said = await say(first.engine, sid, "/session snapshot before t2")
        assert "snapshot" in said["text"] and "'before t2'" in said["text"], said
        with pytest.raises(SessionRunningError) as refused:
            await first.engine.restore_snapshot(sid, "before t2")
        assert refused.value.error_kind is ErrorKind.CONFLICT
        assert "the DAG of plan p1" in str(refused.value)
        with pytest.raises(SessionRunningError):
            await first.engine.close_session(sid)
    finally:
        await first.engine.aclose()  # the DAG stays "running"

    return sid


async def test_a_restored_snapshot_runs_the_dag_on_from_where_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("t1", "librarian"), node("t2", "tester", "t1"), node("t3", "librarian", "t2"))
    script(tmp_path / "first.json", monkeypatch, [
        *architect_proposes(doc), {"expect": "do t1", "text": "Found it."},
        {"expect": "do t2", "text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    sid = await snapshot_mid_dag(data_dir, workspace)

    second = Run(data_dir, workspace)  # no turn is taken here
    try:
        [row] = second.engine.session_snapshots(sid)
        assert row.label == "before t2"
        # what a later run leaves: every node passed, the DAG passed, the phase moved on
        store, dag_id = second.parts.dags.store, f"{sid}/p1/v1"
        before = await store.load(dag_id)
        assert before["t1"].status is NodeStatus.PASSED  # t2 and t3 stopped with the engine
        for node_id in ("t2", "t3"):
            await store.save(dag_id, node_id, NodeRecord(NodeStatus.PASSED, 1, "later",
                                                         digest=before["t1"].digest))  # fmt: skip
        dags = second.engine.get_session(sid).metadata["dags"]
        dags["p1"]["status"] = "passed"
        await second.parts.sessions.set_metadata(sid, "dags", dags)

        restored = await second.engine.restore_snapshot(sid, row.short_id, resume=False)
        assert restored.metadata["dags"]["p1"]["status"] == "running"
        assert restored.phase is SessionPhase.EXECUTION
        after = await store.load(dag_id)
        assert after["t1"].status is NodeStatus.PASSED and after["t1"].output == "Found it."
        assert after["t2"].status is NodeStatus.RUNNING
        assert after["t3"].status is NodeStatus.PENDING  # ran after the snapshot: runs again
        notice = (await second.engine.transcript(sid))[-1].payload["text"]
        assert f"Restored snapshot {row.short_id} (before t2)" in notice
        assert "Plan p1: DAG running; nodes 1 passed, 1 running" in notice
    finally:
        await second.engine.aclose()

    script(tmp_path / "third.json", monkeypatch, [
        {"expect": "do t2", "text": "Checked."}, {"expect": "do t3", "text": "Done."},
    ])  # fmt: skip
    third = Run(data_dir, workspace)
    try:
        assert await third.engine.resume_dags() == [(sid, "p1")]
        outcome = await third.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert outcome.outputs == {"t1": "Found it.", "t2": "Checked.", "t3": "Done."}
        t1_moves = [e for e in third.dag_events() if e.node_id == "t1"]
        assert t1_moves and all(e.resumed for e in t1_moves)  # passed at the snapshot: skipped
    finally:
        await third.engine.aclose()


async def test_routes_and_loaded_ops_come_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, [{"text": "It is in cli.py."}] * 3)
    run = Run(data_dir, workspace)
    engine, parts = run.engine, run.parts
    try:
        session = await engine.ensure_session()
        line = "where is the command line flag parsing done in this codebase?"
        await engine.submit(session.id, line)
        tracker = parts.gateway.tracker
        assert tracker is not None
        op = next(s.op for s in parts.gateway.registry.list(tier=SkillTier.CONTEXTUAL)
                  if s.agent == "librarian")  # fmt: skip
        tracker.load(session.id, "librarian", op)
        snap = await engine.snapshot_session(session.id, "routes")
        assert snap.version == 3 and snap.workflow is not None
        routes = [r.text for r in snap.workflow.guide_routes]
        assert line in routes, routes
        assert op in snap.workflow.agents["librarian"].loaded_ops
        assert snap.workflow.agents["librarian"].tail  # its conversation's tail

        parts.guide.router.cache.clear()
        tracker.forget(session.id)
        await engine.restore_snapshot(session.id, "routes")
        assert parts.guide.router.cache.get(line) is not None
        assert op in tracker.loaded(session.id, "librarian")
    finally:
        await engine.aclose()


async def test_bad_snapshot_ids_and_documents_are_typed_errors(
    engine: Engine, data_dir: Path
) -> None:
    session = await engine.create_session("snapped")
    said = await engine.submit(session.id, "/session restore nothing-here")
    assert "no snapshot 'nothing-here' of session 'snapped'" in said[-1].payload["text"]
    with pytest.raises(SnapshotNotFoundError) as missing:
        await engine.restore_snapshot(session.id, "nothing-here")
    assert missing.value.error_kind is ErrorKind.NOT_FOUND
    assert (
        "no snapshots"
        in (await engine.submit(session.id, "/session snapshots"))[-1].payload["text"]
    )

    garbled = await engine.snapshot_session(session.id, "garbled")
    newer = await engine.snapshot_session(session.id, "newer")
    wrong = await engine.snapshot_session(session.id, "wrong shape")
    foreign = await engine.snapshot_session(session.id, "foreign")
    listed = (await engine.submit(session.id, "/session snapshots"))[-1].payload["text"]
    assert "garbled" in listed and "newer" in listed
    with sqlite3.connect(engine.archive.path) as db:  # type: ignore[attr-defined]
        db.execute("UPDATE snapshots SET data = ? WHERE id = ?", ("{not json", garbled.id))
        doc = json.loads(newer.model_dump_json()) | {"version": 99}
        db.execute("UPDATE snapshots SET data = ? WHERE id = ?", (json.dumps(doc), newer.id))
        bad = json.loads(wrong.model_dump_json())
        bad["workflow"]["dags"] = [{"plan_id": "p"}]
        db.execute("UPDATE snapshots SET data = ? WHERE id = ?", (json.dumps(bad), wrong.id))
        other = json.loads(foreign.model_dump_json())  # another session's DAG: never written
        other["workflow"]["dags"] = [{"plan_id": "p1", "dag_id": "other/p1/v1", "status": "running",
                                      "nodes": {"t1": {"status": "pending"}}}]  # fmt: skip
        db.execute("UPDATE snapshots SET data = ? WHERE id = ?", (json.dumps(other), foreign.id))
    refusals = (("garbled", "not JSON"), ("newer", "version 99 is newer"),
                ("wrong shape", "do not parse"), ("foreign", "not this session's"))  # fmt: skip
    for label, why in refusals:
        with pytest.raises(SnapshotUnreadableError) as unreadable:
            await engine.restore_snapshot(session.id, label)
        assert why in str(unreadable.value), str(unreadable.value)
    said = await engine.submit(session.id, "/session restore garbled")
    assert "cannot be read: its document is not JSON" in said[-1].payload["text"]
    assert len(engine.session_snapshots(session.id)) == 4  # nothing deleted


async def test_a_label_is_one_line_and_bounded(engine: Engine) -> None:
    session = await engine.create_session("labels")
    snap = await engine.snapshot_session(session.id, "  two\nlines  ")
    assert snap.label == "two lines"
    said = await engine.submit(session.id, "/session snapshot " + "x" * 81)
    assert "at most 80 characters" in said[-1].payload["text"]


async def test_restore_runs_a_dag_that_was_running_on_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("t1", "librarian"), node("t2", "tester", "t1"), node("t3", "librarian", "t2"))
    script(tmp_path / "first.json", monkeypatch, [
        *architect_proposes(doc), {"expect": "do t1", "text": "Found it."},
        {"expect": "do t2", "text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    sid = await snapshot_mid_dag(data_dir, workspace)
    script(tmp_path / "second.json", monkeypatch, [
        {"expect": "do t2", "text": "Checked."}, {"expect": "do t3", "text": "Done."},
    ])  # fmt: skip
    second = Run(data_dir, workspace)
    try:
        said = await say(second.engine, sid, "/session restore 'before t2'")
        assert "restored" in said["text"], said
        outcome = await second.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert outcome.outputs == {"t1": "Found it.", "t2": "Checked.", "t3": "Done."}
        assert all(e.resumed for e in second.dag_events() if e.node_id == "t1")
    finally:
        await second.engine.aclose()
