"""A session's worker limits set by ``/session limits`` in a real engine: kept in its
SessionConfig across a restart, a bad value answered with the usage, a DAG of six
parallel nodes peaking at the limit set; a queued user request says it waits, once, and
one granted at once says nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.engine import Engine
from backend.engine.worker_lanes import EngineWorkers
from backend.events import DagStatusChanged, EngineEvent
from backend.orchestration import DagStatus, Lane
from tests.integration.orchestration.plan_runs import Run, architect_proposes, node, plan, script
from tests.integration.plans.conftest import parts, say
from tests.support.polling import until


async def test_limits_set_by_the_command_bound_a_dag_of_six_parallel_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    doc = plan(*(node(f"t{i}", "librarian") for i in range(6)), max_concurrency=6)
    answers = [{"text": f"answer {i}."} for i in range(6)]
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
        said = await say(run.engine, sid, "/session limits tasks 3 engineers 1")
        assert "limits set" in said["text"] and "0/3 tasks, 0/1 engineers" in said["text"]
        config = run.engine.get_session(sid).config
        assert (config.max_concurrent_tasks, config.max_engineers) == (3, 1)
        status = run.parts.status_text(sid)
        assert "Workers:" in status and "this session: 0/3 tasks, 0/1 engineers" in status
        await say(run.engine, sid, "/plan approve p1")
        outcome = await run.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        assert peak == 3
        pool = run.parts.workers  # every worker is back when the DAG ends
        assert (pool.busy, pool.waiting) == (0, 0)
        assert f"workers 0/{pool.max_workers} busy" in run.parts.status_text(sid)
    finally:
        await run.engine.aclose()


async def test_limits_survive_a_restart_and_a_bad_value_names_the_usage(
    data_dir: Path, workspace: Path
) -> None:
    engine = Engine.from_parts(parts(data_dir, workspace))
    try:
        sid = (await engine.ensure_session()).id
        await say(engine, sid, "/session limits engineers 2")
        for bad in ("tasks 0", "tasks many", "workers 3", "tasks", "tasks 2000"):
            reply = await say(engine, sid, f"/session limits {bad}")
            assert reply["error"] == "CommandError", (bad, reply)
            assert "/session limits [tasks N] [engineers N]" in reply["text"], reply
        shown = await say(engine, sid, "/session limits")
        assert "0/4 tasks, 0/2 engineers" in shown["text"]  # the bad ones changed nothing
    finally:
        await engine.aclose()
    again = Engine.from_parts(parts(data_dir, workspace))
    try:
        assert again.get_session(sid).config.max_engineers == 2
        assert "0/4 tasks, 0/2 engineers" in again.status_text(sid)
    finally:
        await again.aclose()


async def test_a_queued_request_says_it_waits_once_and_a_granted_one_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, [{"text": "first."}, {"text": "second."}])
    engine = Engine.from_parts(parts(data_dir, workspace))
    pool = engine._parts.workers
    assert isinstance(pool, EngineWorkers)
    pool.notice_after_s = 0  # any queueing is long enough: no clock in the test
    try:
        sid = (await engine.ensure_session()).id
        await say(engine, sid, "/session limits tasks 1")
        reply = await say(engine, sid, "@librarian what is here?")
        assert reply["text"] == "first."
        texts = [str(m.payload.get("text")) for m in await engine.transcript(sid)]
        assert not any("waiting for a worker" in t for t in texts)  # granted at once

        held = await pool.acquire(sid, Lane.USER)  # the session's one task is taken
        asked = asyncio.create_task(engine.submit(sid, "@librarian and now?"))

        async def waiting_said() -> bool:
            found = [str(m.payload.get("text")) for m in await engine.transcript(sid)]
            return any("waiting for a worker" in t for t in found)

        await until(lambda: pool.waiting == 1, what="the request queued")
        await until(waiting_said, what="the waiting notice")
        held.release()
        answer = (await asyncio.wait_for(asked, 30))[-1]
        assert answer.payload["text"] == "second."
        texts = [str(m.payload.get("text")) for m in await engine.transcript(sid)]
        said = [t for t in texts if "waiting for a worker" in t]
        assert said == ["waiting for a worker (this session runs 1/1 tasks; 0 ahead)"]
        assert (pool.busy, pool.waiting) == (0, 0)
    finally:
        await engine.aclose()
