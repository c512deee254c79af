"""The DAG book: what a session's DAGs are when no run is live in this process.

``orchestrator.dag.status`` after a restart reads the session's metadata and the node
records in the state file; these tests drive :class:`DagBook` on a real engine's
sessions, plan desk and SQLite state file.
"""

from __future__ import annotations

import pytest

from backend.engine.build import EngineParts
from backend.engine.plan_runs.dag_nodes import DagNotFoundError
from backend.engine.plan_runs.dag_status import RUNNING, DagBook
from backend.orchestration import NodeRecord, NodeStatus
from tests.integration.orchestration.plan_runs import node, plan


async def test_a_stored_dag_reads_back_from_the_record_and_the_state_file(
    engine_parts: EngineParts,
) -> None:
    parts = engine_parts
    try:
        session = await parts.sessions.create_session("book")
        doc = plan(node("a", "librarian"), node("b", "engineer", "a"))
        await parts.plans.propose(session.id, doc, source="test")
        book = DagBook(parts.sessions, parts.plans, parts.dags.store)
        await book.remember(session.id, "p1", version=1, dag_id="d1", status=RUNNING)
        await parts.dags.store.save("d1", "a", NodeRecord(NodeStatus.FAILED, 2, error="boom"))

        [summary] = await book.status(session.id, None, live=None)

        assert summary["status"] == RUNNING and "started_at" in summary
        rows = {row["id"]: row for row in summary["nodes"]}
        assert rows["a"] == {"id": "a", "agent": "librarian", "status": "failed",
                             "attempts": 2, "duration_s": None, "error": "boom"}  # fmt: skip
        assert rows["b"]["status"] == "pending" and "running_for_s" not in rows["b"]
        assert book.running_plans(parts.sessions.get(session.id)) == ["p1"]
        await book.remember(session.id, "p1", status="passed")  # an update keeps the rest
        assert book.entries(session.id)["p1"]["dag_id"] == "d1"
        assert book.running_plans(parts.sessions.get(session.id)) == []
        with pytest.raises(DagNotFoundError):
            await book.status(session.id, "nope", live=None)
    finally:
        await parts.aclose()


async def test_a_hand_edited_entry_is_skipped_not_a_traceback(engine_parts: EngineParts) -> None:
    parts = engine_parts
    try:
        session = await parts.sessions.create_session("odd")
        await parts.sessions.set_metadata(session.id, "dags", {"p1": "garbage", "p2": {}})
        book = DagBook(parts.sessions, parts.plans, parts.dags.store)
        assert book.entries(session.id) == {}
        assert await book.status(session.id, None, live=None) == []
        assert book.running_plans(parts.sessions.get(session.id)) == []
    finally:
        await parts.aclose()
