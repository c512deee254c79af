"""A change request runs as a plan, end to end, through the engine's public API only.

The scripted model plays the demo's script (``examples/verbose-flag.yaml``) on a git
copy of the example project: the request reaches the Architect, whose plan (a librarian
task, then two engineer tasks at once) is reviewed as a question the test answers
through the engine; the approved DAG runs; task e1's first attempt leaves an unused
import (the real ruff fails it) and a changed greeting (the real pytest fails it next),
each failure reaches the next engineer turn as feedback (the script's ``expect`` checks
that it did), and the third loop passes; task e2 passes at once. Then the session's QA
inspects the changed files and runs the whole suite (both clean), and the phase is
complete, with the Architect's summary. Every step is in the event stream and in the
archive: the plan's status, the phase log, the DAG's node records, the QA record and
the transcript's notices and summary.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.engine import Engine, EngineConfig
from backend.events import (
    DagStatusChanged,
    EngineEvent,
    EngineNotice,
    PlanApproved,
    PlanChanged,
    QuestionAsked,
    SessionPhaseChanged,
)
from backend.orchestration import DagOutcome, DagStatus
from backend.sessions.phases import SessionPhase
from tests.integration.e2e.flow import (
    CHANGED,
    E1_MOVES,
    E2_MOVES,
    PLAN_ID,
    REQUEST,
    SCRIPT,
    assert_changed_once,
    example_repo,
    project_checks_pass,
    tools_path,
    work_tree,
)
from tests.support.polling import finishes, until


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", tools_path())
    monkeypatch.setenv("SYLK_SCRIPT", str(SCRIPT))
    return example_repo(tmp_path)


def pipeline_moves(events: list[EngineEvent], task: str) -> list[str]:
    prefix = f"Plan {PLAN_ID}, task {task}: "
    return [
        e.text.removeprefix(prefix).split(":")[0]
        for e in events
        if isinstance(e, EngineNotice) and e.text.startswith(prefix)
    ]


async def test_a_request_runs_as_a_plan_whose_pipeline_fixes_what_ruff_and_pytest_found(
    repo: Path, data_dir: Path
) -> None:
    config = EngineConfig(data_dir=data_dir, workspace=repo, provider="scripted")
    engine = Engine(config)
    events: list[EngineEvent] = []
    engine.events.add_listener(events.append)
    detach = engine.attach_questions()  # a front end that answers the plan review
    try:
        session = await engine.ensure_session()
        sid = session.id
        await engine.approval_command(sid, "auto-edit")
        asking = asyncio.create_task(engine.submit(sid, REQUEST))
        await until(lambda: engine.pending_questions(sid), what="the plan review")
        [review] = engine.pending_questions(sid)
        assert review.question.plan is not None and review.question.plan.plan_id == PLAN_ID
        assert "e1" in review.question.plan.text and "librarian" in review.question.plan.text
        assert engine.answer_question(review.question_id, "approve")
        reply = (await finishes(asking, what="the Architect's turn"))[-1]
        assert reply.payload.get("agent") == "architect", reply.payload
        outcome = await finishes(engine.wait_dag(sid, PLAN_ID), what="the plan's DAG")
        assert outcome is not None and outcome.status is DagStatus.PASSED, outcome
        qa = await finishes(engine.wait_qa(sid), what="the session's QA")
        assert qa is not None and qa.stage == "complete", qa
        assert qa.findings == [] and qa.rounds == 0 and qa.inspected == CHANGED
        assert qa.tests is not None and qa.tests.get("status") == "passed", qa.tests

        assert_event_stream(events, review)
        await assert_archive(engine, sid, outcome)
    finally:
        detach()
        await engine.aclose()

    # What is on disk: each change once, and the project's own checks pass on it.
    assert_changed_once(work_tree(repo, data_dir))
    project_checks_pass(work_tree(repo, data_dir))


def assert_event_stream(events: list[EngineEvent], review: QuestionAsked) -> None:
    """Proposed, asked, approved, run; each task's moves; each pipeline's loops."""
    plan_moves = [e.status for e in events if isinstance(e, PlanChanged)]
    assert plan_moves == ["awaiting_approval", "approved"]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("QuestionAsked") < kinds.index("PlanApproved")
    assert [(e.plan_id, e.version, e.by) for e in events if isinstance(e, PlanApproved)] == [
        (PLAN_ID, 1, "user")
    ]
    assert [(e.old_phase, e.phase) for e in events if isinstance(e, SessionPhaseChanged)] == [
        (SessionPhase.IDLE, SessionPhase.PLANNING),
        (SessionPhase.PLANNING, SessionPhase.EXECUTION),
        (SessionPhase.EXECUTION, SessionPhase.INSPECTION),
        (SessionPhase.INSPECTION, SessionPhase.TESTING),
        (SessionPhase.TESTING, SessionPhase.COMPLETE),
    ]
    dag = [e for e in events if isinstance(e, DagStatusChanged)]
    for task in ("t1", "e1", "e2"):
        assert [e.status for e in dag if e.node_id == task] == ["pending", "running", "passed"]
    order = [(e.node_id, e.status) for e in dag]
    assert order.index(("t1", "passed")) < order.index(("e1", "running"))
    assert order.index(("e1", "running")) < order.index(("e2", "passed"))  # at once
    assert order[0] == (None, "running") and order[-1] == (None, "passed")
    assert pipeline_moves(events, "e1") == E1_MOVES
    assert pipeline_moves(events, "e2") == E2_MOVES
    assert [e for e in events if isinstance(e, QuestionAsked)] == [review]


async def assert_archive(engine: Engine, sid: str, outcome: DagOutcome) -> None:
    """The plan's status, the phase log, the DAG's node records, the transcript's notices."""
    [stored] = await engine.plans(sid)
    assert (stored.plan_id, stored.version, stored.status) == (PLAN_ID, 1, "approved")
    history = await engine.phase_history(sid)
    assert [h.new for h in history] == [
        SessionPhase.PLANNING, SessionPhase.EXECUTION, SessionPhase.INSPECTION,
        SessionPhase.TESTING, SessionPhase.COMPLETE,
    ]  # fmt: skip
    assert history[1].approval == f"plan {PLAN_ID} v1"
    assert engine.session_phase(sid) is SessionPhase.COMPLETE
    [status] = await engine.dag_status(sid, PLAN_ID)
    assert status["status"] == "passed"
    assert {n["id"]: (n["status"], n["attempts"]) for n in status["nodes"]} == {
        "t1": ("passed", 1), "e1": ("passed", 1), "e2": ("passed", 1),
    }  # fmt: skip
    transcript = await engine.transcript(sid)
    notes = [str(m.payload["text"]) for m in transcript if m.payload.get("dag")]
    assert f"Plan {PLAN_ID}: ▶ t1 (librarian) started, attempt 1/3" in notes
    assert any(n.startswith(f"Plan {PLAN_ID}: ✓ e1 (engineer) passed in ") for n in notes)
    assert notes[-1] == f"Plan {PLAN_ID}: every task passed (3 passed); next: inspection"
    said = str(outcome.outputs["e1"])
    assert said.endswith("the greeting is unchanged."), said
    qa_notes = [str(m.payload["text"]) for m in transcript if m.payload.get("qa")]
    assert qa_notes[0].startswith(f"Session QA after plan {PLAN_ID}: inspecting"), qa_notes
    summary = transcript[-1].payload
    assert summary.get("response_type") == "WORKFLOW_COMPLETE", summary
    assert f"Plan {PLAN_ID} is complete." in str(summary["text"])
    assert "Files modified: README.md, greet/cli.py" in str(summary["text"])
