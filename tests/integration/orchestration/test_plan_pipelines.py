"""An approved plan's engineer node runs as a pipeline through the engine, with the scripted
model and the project's real ruff: the first turn writes a file with an unused import, the
inspector's finding reaches the second turn, which fixes it, and the node passes; a node
still failing at the loop limit with nobody to ask fails for good, without a retry."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import EngineNotice
from backend.orchestration import DagStatus
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.plans.conftest import say
from tests.support.ruff_project import BAD, ruff_project
from tests.support.scripted import execute, read_then_edit


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ruff_project(workspace, monkeypatch)


def writes_bad_file() -> list[dict[str, object]]:
    call = execute("engineer.file.write", path="pkg/flags.py", content=BAD)
    return [{"text": "Writing.", "tool_calls": [call]}, {"text": "Wrote pkg/flags.py."}]


def notices(run: Run, task: str) -> list[str]:
    prefix = f"Plan p1, task {task}: "
    return [
        e.text.removeprefix(prefix)
        for e in run.events
        if isinstance(e, EngineNotice) and e.text.startswith(prefix)
    ]


async def test_the_inspectors_feedback_reaches_the_next_turn_which_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    fix = read_then_edit("pkg/flags.py", "import os\n\n", "", said="Removed the unused import.")
    fix[0]["expect"] = "pkg/flags.py:1: [ruff F401]"  # the inspector's finding, file:line
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer"))),
        {**writes_bad_file()[0], "expect": "Task e1 of plan p1: do e1"},
        writes_bad_file()[1],
        *fix,
    ])  # fmt: skip
    run = Run(data_dir, project)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert str(outcome.outputs["e1"]).endswith("Removed the unused import.")
        assert (project / "pkg" / "flags.py").read_text() == "VERBOSE = True\n"
        moves = [n.split(":")[0] for n in notices(run, "e1")]
        assert moves == [
            "running (loop 1)", "inspecting (loop 1)",
            "running (loop 2)", "inspecting (loop 2)", "testing (loop 2)",
            "completed (loop 2)",
        ]  # fmt: skip
        assert run.node_moves("e1") == ["pending", "running", "passed"]
    finally:
        await run.engine.aclose()


async def test_at_the_loop_limit_with_nobody_to_ask_the_node_fails_without_a_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    stuck = {"expect": "F401", "text": "I cannot fix it."}
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer", retry={"max": 2, "backoff_ms": 0}))),
        *writes_bad_file(), stuck, stuck,
    ])  # fmt: skip
    run = Run(data_dir, project)
    try:
        sid = await run.session_with_plan()
        await say(run.engine, sid, "/plan approve p1")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.FAILED, outcome
        assert run.node_moves("e1") == ["pending", "running", "failed"]  # no retry
        said = notices(run, "e1")
        assert said[-2].startswith("waiting_for_user (loop 3): the inspector still fails")
        assert said[-1].startswith("failed (loop 3)")
        assert (project / "pkg" / "flags.py").read_text() == BAD
    finally:
        await run.engine.aclose()
