"""Session QA after a plan's DAG, through a real engine on the scripted model, with the
project's real ruff and pytest in the sandbox: a clean plan completes with its summary and
promoted decisions; a lint error the pipeline could not see gets a fix plan (the
Architect's, or QA's own without an Architect model), which runs, and QA passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.knowledge.chronicle.models import Category, ChronicleQuery
from tests.integration.team.session_qa_runs import (
    FLAGS,
    FLAGS_TEST,
    QaRun,
    architect_proposes,
    engineer_fixes,
    engineer_writes,
    node,
    plan,
)

# A change with no test makes its pipeline ask the engineer for tests; it declines.
NO_TEST = {"expect": "Write tests for task", "text": "No new test for this."}


async def test_a_clean_plan_completes_with_the_summary_and_promoted_decisions(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [
        *architect_proposes(plan(node("e1", "add pkg/flags.py with VERBOSE"))),
        *engineer_writes({"pkg/flags.py": FLAGS, "tests/test_flags.py": FLAGS_TEST},
                         expect="Task e1 of plan p1"),
    ]  # fmt: skip
    run = QaRun(data_dir, workspace, monkeypatch, turns)
    try:
        sid = await run.session()
        await run.say(sid, "@architect add a --verbose flag")
        await run.say(sid, "/plan approve p1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert run.phases()[-4:] == ["execution", "inspection", "testing", "complete"]
        [said] = await run.summaries(sid)
        summary = said["summary"]
        assert sorted(summary["files_created"]) == ["pkg/flags.py", "tests/test_flags.py"]
        assert summary["files_modified"] == []
        assert summary["tests"]["status"] == "passed"
        assert (summary["tests"]["passed"], summary["tests"]["failed"]) == (3, 0)
        assert summary["validation"]["clean"] is True
        assert summary["deferred"] == [] and summary["fix_rounds"] == 0
        assert "Tests: 3 passed, 0 failed (pytest)" in said["text"]
        assert record.summary is not None and record.summary["promoted"] == 2
        chronicle = run.parts.knowledge.chronicle
        other = await run.engine.create_session("other")  # promoted: every session sees them
        seen = await chronicle.query(other.id, ChronicleQuery(categories=[Category.DECISION]))
        titles = sorted(e.title or "" for e in seen)
        assert titles == ["Completed plan p1", "Plan p1"]
        assert all(e.promoted for e in seen)
        assert "last completed: plan p1: 2 file(s) changed" in await run.say(sid, "/plan")
    finally:
        await run.aclose()


async def test_a_lint_error_gets_the_architects_fix_plan_which_runs_then_qa_passes(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fix_plan = plan(node("f1", "remove the unused import from pkg/gen.py"), plan_id="p1-fix1")
    turns = [
        *architect_proposes(plan(node("e1", "add the flag and generate pkg/gen.py"))),
        *engineer_writes({"pkg/flags.py": FLAGS}, shell="printf 'import os\\n\\nMODE = 1\\n' "
                         "> pkg/gen.py"),
        NO_TEST,
        *architect_proposes(fix_plan, expect="pkg/gen.py:1: [ruff F401]"),
        *engineer_fixes("pkg/gen.py", "import os\n\n", "", expect="Task f1 of plan p1-fix1"),
        NO_TEST,
    ]  # fmt: skip
    run = QaRun(data_dir, workspace, monkeypatch, turns, assume_yes=True)
    try:
        sid = await run.session()
        await run.say(sid, "@architect add a --verbose flag")
        record = await run.settle(sid)
        assert (workspace / "pkg" / "gen.py").read_text() == "MODE = 1\n"
        assert record is not None and record.stage == "complete", record
        assert record.plans == ["p1", "p1-fix1"] and record.rounds == 1
        assert run.phases() == ["planning", "execution", "inspection", "execution",
                                "inspection", "testing", "complete"]  # fmt: skip
        findings = await run.notices(sid, "findings")
        assert len(findings) == 1 and "pkg/gen.py:1: [ruff F401]" in findings[0]
        [said] = await run.summaries(sid)
        assert said["summary"]["fix_rounds"] == 1
        assert sorted(said["summary"]["files_created"]) == ["pkg/flags.py", "pkg/gen.py"]
    finally:
        await run.aclose()


async def test_without_an_architect_model_the_fix_plan_is_one_task_per_file(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [
        *engineer_writes({"pkg/flags.py": FLAGS}, shell="printf 'import os\\n\\nMODE = 1\\n' "
                         "> pkg/gen.py"),
        NO_TEST,
        *engineer_fixes("pkg/gen.py", "import os\n\n", "",
                        expect="found these problems in pkg/gen.py"),
        NO_TEST,
    ]  # fmt: skip
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True, assume_yes=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(node("e1")))
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        fix = await run.parts.plans.latest(sid, "p1-fix1")
        [task] = fix.document["nodes"]
        assert task["agent"] == "engineer" and task["id"] == "fix1-pkg_gen.py"
        assert "pkg/gen.py:1: [ruff F401]" in task["prompt"]
        assert fix.status == "approved" and fix.decided_by == "yes"
        assert (workspace / "pkg" / "gen.py").read_text() == "MODE = 1\n"
    finally:
        await run.aclose()
