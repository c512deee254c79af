"""Resuming after Sylk stopped covers background sessions and session QA.

A plan keeps running in a suspended (background) session, so its DAG resumes from there
too; and a session QA pass in flight when Sylk stopped resumes at the step it reached
(here: the whole test suite, stopped mid-run). Real engines on one data dir, one
closed mid-way, then a new one; the scripted model; the project's real pytest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.orchestration import DagStatus
from backend.sessions.models import SessionState
from backend.sessions.phases import SessionPhase
from tests.integration.orchestration.plan_runs import (
    HANG_TEXT,
    Run,
    architect_proposes,
    node,
    plan,
    script,
)
from tests.integration.pipelines.task_runs import python_project
from tests.integration.plans.conftest import say
from tests.support.polling import until

SLOW_TEST = "import time\n\n\ndef test_slow() -> None:\n    time.sleep(120)\n"
QUICK_TEST = "def test_quick() -> None:\n    assert 1 + 1 == 2\n"


async def test_a_suspended_sessions_running_dag_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(node("t1", "librarian"), node("t2", "tester", "t1"))
    script(tmp_path / "first.json", monkeypatch, [
        *architect_proposes(doc), {"expect": "do t1", "text": HANG_TEXT},
    ], delay=0.05)  # fmt: skip
    first = Run(data_dir, workspace)
    try:
        sid = await first.session_with_plan()
        await say(first.engine, sid, "/plan approve p1")
        await until(lambda: "running" in first.node_moves("t1"))
        await first.engine.create_session("elsewhere")  # the plan's session: background
        assert first.engine.get_session(sid).state is SessionState.SUSPENDED
    finally:
        await first.engine.aclose()  # the DAG stays "running" for the next start

    script(tmp_path / "second.json", monkeypatch, [
        {"expect": "do t1", "text": "Found it."}, {"expect": "do t2", "text": "Checked."},
    ])  # fmt: skip
    second = Run(data_dir, workspace)
    try:
        assert second.engine.get_session(sid).state is SessionState.SUSPENDED
        assert await second.engine.resume_dags() == [(sid, "p1")]
        outcome = await second.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert outcome.outputs["t2"] == "Checked."
    finally:
        await second.engine.aclose()


async def test_a_qa_pass_stopped_mid_test_run_resumes_at_the_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    (project / "tests").mkdir()
    (project / "tests" / "test_slow.py").write_text(SLOW_TEST)
    script(tmp_path / "first.json", monkeypatch, [
        *architect_proposes(plan(node("t1", "librarian"))),
        {"expect": "do t1", "text": "Found it."},
    ])  # fmt: skip
    first = Run(data_dir, project)
    try:
        sid = await first.session_with_plan()
        await say(first.engine, sid, "/plan approve p1")

        def qa_stage() -> str | None:
            record = first.engine.get_session(sid).metadata.get("qa") or {}
            return record.get("stage")

        await until(lambda: qa_stage() == "testing")  # the suite runs: Sylk stops here

        async def said_running() -> bool:  # the stage is saved just before its notice
            return any(
                m.payload.get("text") == "Session QA: running the whole test suite"
                for m in await first.engine.transcript(sid)
            )

        await until(said_running, what="the test run's notice")
    finally:
        await first.engine.aclose()

    (project / "tests" / "test_slow.py").write_text(QUICK_TEST)
    second = Run(data_dir, project)
    try:
        assert second.engine.session_phase(sid) is SessionPhase.TESTING
        assert await second.engine.resume_dags() == []  # no DAG: QA resumes on its own
        record = await second.engine.wait_qa(sid)
        assert record is not None and record.stage == "complete", record
        assert record.tests is not None and record.tests.get("passed") == 1, record.tests
        assert second.engine.session_phase(sid) is SessionPhase.COMPLETE
        said = [str(m.payload.get("text")) for m in await second.engine.transcript(sid)
                if m.payload.get("qa")]  # fmt: skip
        assert said.count("Session QA: running the whole test suite") == 2  # before, again
        assert not any("inspecting the" in s for s in said[said.index(
            "Session QA: running the whole test suite"):])  # fmt: skip
    finally:
        await second.engine.aclose()
