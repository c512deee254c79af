"""``/task ID VERB [TEXT]`` steers a running pipeline through the engine, with the scripted
model and Sylk's real ruff and pytest: the engineer's first write waits for the user's
approval (a real pause), and the test steers the pipeline meanwhile."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from backend.events import EngineNotice
from backend.messages import MessageType
from backend.orchestration import DagStatus
from backend.sessions.phases import SessionPhase
from backend.skills.builtin.catalog import agent_context
from tests.integration.orchestration.plan_runs import architect_proposes, node, plan
from tests.integration.pipelines.task_runs import BAD, Desk, python_project, script, writes
from tests.support.scripted import read_then_edit

ASK_TEXT = "add a VERBOSE flag to pkg/flags.py"
FAILING_TEST = (
    "from pkg.flags import VERBOSE\n\n\ndef test_quiet_by_default() -> None:\n"
    "    assert VERBOSE is False\n"
)


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return python_project(workspace, monkeypatch)


async def test_a_prompt_reaches_the_next_engineer_turn_and_query_tells_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    fix = read_then_edit("pkg/flags.py", "import os\n\n", "", said="Done, and kept it True.")
    fix[0]["expect"] = "- keep the flag True"  # the user's message, in the next request
    script(tmp_path / "s.json", monkeypatch, [*writes("pkg/flags.py", BAD), *fix])
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("ask")
        answer = asyncio.create_task(desk.say(sid, f"@engineer {ASK_TEXT}"))
        asked = await desk.question(sid)  # loop 1's write waits: the engineer's turn runs

        sent = await desk.say(sid, "/task q1 prompt keep the flag True")
        assert "reaches the engineer's next turn (loop 2 of 3)" in sent["text"]
        assert "the pipeline is running (loop 1)" in sent["text"]
        query = str((await desk.say(sid, "/task q1 query"))["text"])
        assert query.startswith("Task q1: running (loop 1/3)")
        assert (
            "Your messages waiting for the next engineer turn: 1\n  - keep the flag True" in query
        )
        assert "Inspector: not run yet" in query

        await desk.engine.approval_command(sid, "auto-edit")  # loop 2's edit goes ahead
        desk.parts.questions.answer(asked.question_id, "allow")
        reply = await answer
        assert str(reply["text"]).endswith("Done, and kept it True.")
        checks = await desk.checks(sid)
        assert checks["state"] == "completed" and checks["loops"] == 2
        assert (project / "pkg" / "flags.py").read_text() == "VERBOSE = True\n"

        after = str((await desk.say(sid, "/task q1 query"))["text"])
        assert after.startswith("Task q1: completed (loop 2/3)")
        assert "Your messages the engineer has read: 1" in after
        assert "Inspector: passed (ruff (formatter), ruff (linter)) at loop 2" in after
        late = await desk.say(sid, "/task q1 prompt one more thing")
        assert late["error"] == "PipelineEndedError" and "has ended (completed)" in late["text"]
        # Each action is an engine notice too (the answers above are in the transcript).
        said = [e.text for e in desk.events if isinstance(e, EngineNotice)]
        assert any(t.startswith("Task q1: your message is queued") for t in said)
    finally:
        await desk.aclose()


async def test_ignore_tester_skips_the_tests_of_a_failing_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "__init__.py").write_text("")
    (project / "tests" / "test_flags.py").write_text(FAILING_TEST)
    script(tmp_path / "s.json", monkeypatch, writes("pkg/flags.py", "VERBOSE = True\n"))
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("ask")
        answer = asyncio.create_task(desk.say(sid, f"@engineer {ASK_TEXT}"))
        asked = await desk.question(sid)
        skipped = await desk.say(sid, "/task q1 ignore_tester")
        assert "the tester is skipped from its next check on" in skipped["text"]
        desk.parts.questions.answer(asked.question_id, "allow")
        await answer
        checks = await desk.checks(sid)
        assert (checks["state"], checks["loops"]) == ("completed", 1)
        assert "inspector passed" in checks["text"] and "tester skipped" in checks["text"]
        moves = [n.split(":")[0] for n in desk.notices("Task q1: ")]
        assert "testing (loop 1)" not in moves and moves[-1] == "completed (loop 1)"
        query = str((await desk.say(sid, "/task q1 query"))["text"])
        assert "Skipped stages: tester" in query
        assert "Note: tester checks skipped by the user (/task) at loop 1" in query
        # The test the tester skipped does fail: the skip is what let the task complete.
        run = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests",
            cwd=project, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        out, _ = await run.communicate()
        assert run.returncode == 1 and b"1 failed" in out, out
    finally:
        await desk.aclose()


async def test_interrupt_fails_the_node_without_a_retry_and_the_dag_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, [
        *architect_proposes(plan(node("e1", "engineer", retry={"max": 2, "backoff_ms": 0}))),
        *writes("pkg/flags.py", BAD, expect="Task e1 of plan p1"),
    ])  # fmt: skip
    desk = Desk(data_dir, project, run_approved_plans=True)
    try:
        sid = await desk.session("auto-edit")
        desk.detach()  # nobody to review the plan: it is stored as proposed
        await desk.say(sid, "@architect add a --verbose flag")
        desk.detach = desk.parts.questions.attach()
        await desk.engine.approval_command(sid, "ask")
        await desk.say(sid, "/plan approve p1")
        await desk.question(sid)  # e1's first write waits: its pipeline runs

        refused = await desk.say(sid, "@engineer fix something small")
        assert refused["error"] == "EngineerBusyError"
        assert "plan p1's DAG runs" in refused["text"] and "running tasks: e1" in refused["text"]
        query = str((await desk.say(sid, "/task e1 query"))["text"])
        assert query.startswith("Plan p1, task e1: running (loop 1/3)")

        stopped = await desk.say(sid, "/task e1 interrupt")
        assert "interrupted while running (loop 1)" in stopped["text"]
        assert "not retried" in stopped["text"]
        outcome = await desk.engine.wait_dag(sid, "p1")
        assert outcome is not None and outcome.status is DagStatus.FAILED
        [status] = await desk.engine.dag_status(sid, "p1")
        [e1] = status["nodes"]
        assert (e1["status"], e1["attempts"], e1["error"]) == ("failed", 1, "interrupted")
        assert desk.engine.session_phase(sid) is SessionPhase.PLANNING
        assert not desk.parts.questions.pending(sid)  # the turn's approval was withdrawn
        assert not (project / "pkg" / "flags.py").exists()
        after = str((await desk.say(sid, "/task e1 query"))["text"])
        assert after.startswith("Plan p1, task e1: failed (loop 1/3) — interrupted")
    finally:
        await desk.aclose()


async def test_an_unknown_task_is_a_typed_error_in_the_transcript(
    data_dir: Path, project: Path
) -> None:
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "/task zz query how far?")
        assert reply["error"] == "PipelineNotFoundError"
        assert "no pipeline runs task 'zz' in this session (running tasks: none)" in reply["text"]
        last = (await desk.engine.transcript(sid))[-1]
        assert last.payload["error"] == "PipelineNotFoundError"
        bad = await desk.say(sid, "/task zz pause")  # the DSL's own typed error
        assert bad["error"] == "CommandError" and "unknown /task verb" in bad["text"]
    finally:
        await desk.aclose()


async def test_the_op_interrupts_a_request_and_the_answer_is_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, project: Path
) -> None:
    """guide.task.interact is /task for a model or an MCP client; a one-node pipeline that
    ends failed answers with the failure, marked as an error (``sylk run`` exits non-zero)."""
    script(tmp_path / "s.json", monkeypatch, writes("pkg/flags.py", BAD))
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("ask")
        answer = asyncio.create_task(desk.engine.submit(sid, f"@engineer {ASK_TEXT}"))
        await desk.question(sid)
        ctx = agent_context("guide", sid, project)
        gateway = desk.parts.gateway
        query = await gateway.execute(ctx, "guide.task.interact",
                                      {"pipeline_id": "1", "action": "query"})  # fmt: skip
        assert query.ok and str(query.result["answer"]).startswith("Task q1: running (loop 1/3)")
        # The pipeline's own engineer may not steer it, and no model skips a check.
        for agent, action in (("engineer", "interrupt"), ("engineer", "ignore_inspector"),
                              ("architect", "ignore_tester")):  # fmt: skip
            own = agent_context(agent, sid, project)
            denied = await gateway.execute(own, "guide.task.interact",
                                           {"pipeline_id": "q1", "action": action},
                                           dry_run=False)  # fmt: skip
            assert denied.error is not None and denied.error.code.value == "ACCESS_DENIED"
        query = await gateway.execute(ctx, "guide.task.interact",
                                      {"pipeline_id": "q1", "action": "query"})  # fmt: skip
        assert "Skipped stages" not in str(query.result["answer"])
        stop = await gateway.execute(
            ctx, "guide.task.interact", {"pipeline_id": "q1", "action": "interrupt"},
            dry_run=False,
        )  # fmt: skip
        assert stop.ok and "interrupted while running" in stop.result["answer"]
        reply = (await answer)[-1]
        assert reply.type is MessageType.SYSTEM_NOTICE
        assert reply.payload["error"] == "PipelineFailed" and reply.payload["state"] == "failed"
        assert reply.payload["text"] == "Checks (task q1, 1 loop(s)): failed — interrupted"
        assert not (project / "pkg" / "flags.py").exists()
        assert not desk.parts.questions.pending(sid)
    finally:
        await desk.aclose()
