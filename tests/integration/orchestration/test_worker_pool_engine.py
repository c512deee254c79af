"""A real engine's approved plan runs through the worker pool: four parallel nodes of a
session whose SessionConfig allows two tasks run two at a time, /status shows the pool,
and every worker is back when the DAG ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import DagStatusChanged, EngineEvent
from backend.orchestration import DagStatus
from backend.sessions.models import SessionConfig
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.plans.conftest import say


async def test_a_plans_parallel_nodes_run_within_the_sessions_max_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(*(node(f"t{i}", "librarian") for i in range(4)), max_concurrency=4)
    answers = [{"text": f"answer {i}."} for i in range(4)]
    script(tmp_path / "s.json", monkeypatch, [*architect_proposes(doc), *answers], delay=0.01)
    run = Run(data_dir, workspace)
    running, peak = 0, 0

    def count(event: EngineEvent) -> None:
        nonlocal running, peak
        if isinstance(event, DagStatusChanged) and event.node_id is not None:
            if event.status == "running":
                running += 1
                peak = max(peak, running)
            elif event.status in ("passed", "failed", "retrying", "cancelled"):
                running -= 1

    run.engine.events.add_listener(count)
    try:
        sid = await run.session_with_plan()
        # No verb sets a session's limits yet: its SessionConfig as the archive would give it.
        limited = SessionConfig(max_concurrent_tasks=2, max_engineers=1)
        real_get = run.parts.sessions.get
        monkeypatch.setattr(run.parts.sessions, "get", lambda ref: real_get(ref).model_copy(
            update={"config": limited}))  # fmt: skip
        status = await say(run.engine, sid, "/status")
        assert "Workers:" in status["text"]
        assert "this session: 0/2 tasks, 0/1 engineers" in status["text"]
        await say(run.engine, sid, "/plan approve p1")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert peak == 2
        pool = run.parts.workers
        assert (pool.busy, pool.waiting) == (0, 0)
        assert f"workers 0/{pool.max_workers} busy" in run.parts.status_text(sid)
    finally:
        await run.engine.aclose()
