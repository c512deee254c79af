"""A batch of edits the approval policy refused fails the task like a single refused edit.

The batch's stored action carries the refusals of the edits inside it, so the pipeline
sees them: in approval mode read-only an engineer whose only write went through
``batch`` does not pass its task with "0 file(s)" checked. Real engine, scripted model,
real files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.orchestration import DagStatus
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.pipelines.task_runs import python_project
from tests.integration.pipelines.test_refused_edits import run_plan, task_notices


def batch_writes(*paths: str) -> list[dict[str, Any]]:
    calls = [{"verb": "execute", "op": "engineer.file.write", "dry_run": False,
              "args": {"path": p, "content": "VERBOSE = True\n"}} for p in paths]  # fmt: skip
    call = {"name": "batch", "arguments": {"calls": calls}}
    return [{"text": "Writing both.", "tool_calls": [call]}, {"text": "Wrote them."}]


async def test_a_batch_of_refused_writes_fails_the_task_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer"))),
        *batch_writes("pkg/flags.py", "pkg/more.py"),
    ])  # fmt: skip
    run = Run(data_dir, project)
    try:
        _, outcome = await run_plan(run, "read-only")
        assert outcome is not None and outcome.status is DagStatus.FAILED, outcome  # type: ignore[attr-defined]
        assert not (project / "pkg" / "flags.py").exists()
        said = task_notices(run, "e1")
        assert said[-1].startswith(
            "failed (loop 1): the engineer's edits to pkg/flags.py, pkg/more.py were not "
            "approved (approval mode read-only): allow them with /approval auto-edit"
        ), said
        assert not any(s.startswith("inspecting") for s in said)
    finally:
        await run.engine.aclose()
