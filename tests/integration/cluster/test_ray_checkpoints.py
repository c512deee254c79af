"""A result applied from Ray is a turn of the session, exactly as a local run's edits are.

The same two-engineer plan (e2 after e1, so the turns never overlap and which one
``/undo`` takes is known) run in process and on the Ray head: afterwards ``/diff``
names both edited files, session QA inspects both (its notice says 2 files), ``/undo``
puts the last turn's file back, and a resumed DAG's task roll-back puts the other node's
file back from the task ledger. On Ray, that node running again lands its result once
more from the ref it pushed (no new run on the cluster), and a third run adds nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.orchestration import DagStatus
from backend.plans import PlanNode
from tests.integration.cluster.ray_runs import RayRun, appends, refs
from tests.integration.orchestration.plan_runs import architect_proposes, node, plan

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]
ORIGINAL = {"a.txt": "one\n", "b.txt": "two\n"}
EDITED = {"a.txt": "one\nfrom e1\n", "b.txt": "two\nfrom e2\n"}


@pytest.fixture
def in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted plan: e1 appends to a.txt, then e2 to b.txt."""
    threads = {"e1": appends("a.txt", "one\n", "from e1\n"),
               "e2": appends("b.txt", "two\n", "from e2\n")}  # fmt: skip
    doc = {
        "turns": architect_proposes(plan(node("e1", "engineer"), node("e2", "engineer", "e1"))),
        "threads": {name: {"match": f"Task {name} of plan", "turns": turns}
                    for name, turns in threads.items()},
    }  # fmt: skip
    (tmp_path / "s.json").write_text(json.dumps(doc))
    monkeypatch.setenv("SYLK_SCRIPT", str(tmp_path / "s.json"))


@pytest.mark.parametrize("backend", ["local", "ray"])
async def test_an_applied_result_is_in_diff_qa_undo_and_the_task_rollback(
    ray_head: None, in_turn: None, data_dir: Path, repo: Path, backend: str
) -> None:
    run = RayRun(data_dir, repo, backend=backend)
    try:
        sid = await run.approved()
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert {name: (repo / name).read_text() for name in EDITED} == EDITED

        diff = await run.engine.session_diff(sid)  # /diff
        assert sorted(f.path for f in diff.files) == ["a.txt", "b.txt"], diff
        assert "+from e1" in diff.patch and "+from e2" in diff.patch

        qa = await run.engine.wait_qa(sid)
        assert qa is not None and sorted(qa.inspected) == ["a.txt", "b.txt"], qa
        said = [str(m.payload.get("text")) for m in await run.engine.transcript(sid)]
        assert "Session QA after plan p1: inspecting the 2 file(s) this session changed" in said

        undone = await run.engine.undo(sid)  # /undo: e2's turn, the last
        assert undone.role == "engineer" and undone.restored == ["b.txt"], undone
        assert undone.remaining == 1  # e1's turn is there to undo too
        assert (repo / "a.txt").read_text() == EDITED["a.txt"]
        assert (repo / "b.txt").read_text() == ORIGINAL["b.txt"]

        rollback = run.parts.dags.before_rerun  # what a resumed DAG does to a running node
        assert rollback is not None
        await rollback(sid, "p1", ["e1"])
        assert {name: (repo / name).read_text() for name in EDITED} == ORIGINAL
        said = [str(m.payload.get("text")) for m in await run.engine.transcript(sid)]
        assert any("task e1: its interrupted attempt's changes were rolled back" in text
                   and "restored a.txt" in text for text in said), said  # fmt: skip

        if backend == "ray":  # the node runs again: its pushed result lands once more
            pipelines = run.parts.dags.remote_pipelines
            assert pipelines is not None
            document = (await run.engine.plans(sid))[-1].document
            node = PlanNode.model_validate(next(n for n in document["nodes"] if n["id"] == "e1"))
            for _ in range(2):  # the second finds it landed: nothing twice
                again = await pipelines.run(run.parts.answers.answer, sid, "p1", node, {})
                assert again.ok, again
                assert (repo / "a.txt").read_text() == EDITED["a.txt"]
            assert len(refs(repo, "refs/sylk/results/")) == 2  # no new run on the cluster
            assert [f.path for f in (await run.engine.session_diff(sid)).files] == ["a.txt"]
    finally:
        await run.engine.aclose()
