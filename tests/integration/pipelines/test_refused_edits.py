"""An engineer whose edits the approval policy refuses does not pass its task.

Before, a refused write changed no file, the inspector and tester checked "0 file(s)",
the task passed and the plan completed with nothing done. Now the pipeline ends failed
with the reason and the way to allow the edits, and the DAG does not retry it (a retry
meets the same policy). A task that only reads still passes. Real engine, scripted
model, the project's real ruff and pytest, real files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import EngineNotice
from backend.orchestration import DagStatus
from backend.sessions.phases import SessionPhase
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.pipelines.task_runs import python_project
from tests.integration.plans.conftest import say
from tests.support.scripted import execute

RETRIED = {"max": 2, "backoff_ms": 0}  # the plan allows retries: a refusal takes none


def writes(path: str, content: str) -> list[dict[str, object]]:
    call = execute("engineer.file.write", path=path, content=content)
    return [{"text": "Writing.", "tool_calls": [call]}, {"text": f"Wrote {path}."}]


def task_notices(run: Run, task: str) -> list[str]:
    prefix = f"Plan p1, task {task}: "
    return [e.text.removeprefix(prefix) for e in run.events
            if isinstance(e, EngineNotice) and e.text.startswith(prefix)]  # fmt: skip


async def run_plan(run: Run, mode: str) -> tuple[str, object]:
    session = await run.engine.ensure_session()
    await run.engine.approval_command(session.id, "auto-edit")  # the Architect's plan
    await say(run.engine, session.id, "@architect add a --verbose flag")
    await run.engine.approval_command(session.id, mode)
    await say(run.engine, session.id, "/plan approve p1")
    return session.id, await run.engine.wait_dag(session.id, "p1")


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("ask", "(approval mode ask, no one to answer): allow them with /approval auto-edit"),
        ("read-only", "(approval mode read-only): allow them with /approval auto-edit"),
    ],
)
async def test_a_refused_write_fails_the_task_once_with_the_way_to_allow_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path, mode: str, why: str
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    project = python_project(workspace, monkeypatch)
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer", retry=RETRIED))),
        *writes("pkg/flags.py", "VERBOSE = True\n"),
    ])  # fmt: skip
    run = Run(data_dir, project)
    try:
        sid, outcome = await run_plan(run, mode)
        assert outcome is not None and outcome.status is DagStatus.FAILED, outcome  # type: ignore[attr-defined]
        assert not (project / "pkg" / "flags.py").exists()
        assert run.node_moves("e1") == ["pending", "running", "failed"]  # not retried
        said = task_notices(run, "e1")
        assert said == [
            "running (loop 1): engineer turn 1",
            f"failed (loop 1): the engineer's edits to pkg/flags.py were not approved {why}"
            + said[-1].split(why, 1)[1],
        ]  # never inspecting "0 file(s)"
        status = await run.engine.dag_status(sid, "p1")
        [e1] = status[0]["nodes"]
        assert e1["status"] == "failed" and e1["attempts"] == 1
        assert "pkg/flags.py were not approved" in e1["error"]
        assert run.engine.session_phase(sid) is SessionPhase.PLANNING  # not inspection, QA
    finally:
        await run.engine.aclose()


async def test_a_task_that_only_reads_still_passes_under_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    read = execute("engineer.file.read", path="pyproject.toml")
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer"))),
        {"text": "Checking.", "tool_calls": [read]},
        {"text": "Nothing to change: the flag is there already."},
    ])  # fmt: skip
    run = Run(data_dir, project)
    try:
        _, outcome = await run_plan(run, "ask")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome  # type: ignore[attr-defined]
        assert task_notices(run, "e1")[-1].startswith("completed (loop 1)")
    finally:
        await run.engine.aclose()
