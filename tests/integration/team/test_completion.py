"""What the user can decide at session QA, and what the completion summary then says:
``/qa skip-tests`` while the whole suite fails (a test of another module that the
pipeline's relevant tests did not run), ``/qa override`` of a lint finding, and either
given before QA runs. The summary names what was deferred; the phase still completes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.team.session_qa_runs import FLAGS, QaRun, engineer_writes, node, plan

SUBTRACTS = "def add(a: int, b: int) -> int:\n    return a - b\n"
# pkg/flags.py has no test: its pipeline asks the engineer for one, who declines.
NO_TEST = {"expect": "Write tests for task", "text": "No new test for this."}
ITS_TEST = "from pkg.calc import add\n\n\ndef test_add() -> None:\n    assert add(3, 1) == 2\n"
MAKES_GEN = "printf 'import os\\n\\nMODE = 1\\n' > pkg/gen.py"


async def test_skip_tests_completes_past_failing_tests_and_the_summary_says_so(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = {"pkg/calc.py": SUBTRACTS, "tests/test_calc.py": ITS_TEST}
    turns = engineer_writes(changes, read=tuple(changes))
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(node("e1")))
        await run.say(sid, "/plan approve p1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "awaiting_fix", record
        assert record.tests is not None and record.tests["failed"] == 1
        [failure] = record.findings
        assert failure.kind == "failure" and failure.file == "tests/test_report.py"
        assert run.engine.session_phase(sid).value == "testing"
        fix = await run.parts.plans.latest(sid, "p1-fix1")
        assert "tests/test_report.py" in fix.document["nodes"][0]["prompt"]
        override = await run.say(sid, "/qa override")
        assert "test failures cannot be overridden" in override
        answer = await run.say(sid, "/qa skip-tests")
        assert answer == "tests skipped: the failures are deferred; completing"
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert run.engine.session_phase(sid).value == "complete"
        assert (await run.parts.plans.latest(sid, "p1-fix1")).status == "rejected"
        [said] = await run.summaries(sid)
        summary = said["summary"]
        assert summary["tests"] == {"skipped": True}
        assert summary["files_modified"] == ["pkg/calc.py", "tests/test_calc.py"]
        assert "tests skipped by the user (/qa skip-tests)" in summary["deferred"]
        assert "Tests: skipped by the user" in said["text"]
    finally:
        await run.aclose()


async def test_override_accepts_the_findings_and_lists_them_as_deferred(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [*engineer_writes({"pkg/flags.py": FLAGS}, shell=MAKES_GEN), NO_TEST]
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True)
    try:
        sid = await run.session()
        await run.submit_plan(sid, plan(node("e1")))
        await run.say(sid, "/plan approve p1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "awaiting_fix"
        assert await run.say(sid, "/qa run") == "session QA runs again for plan p1"
        record = await run.settle(sid)  # nothing changed: the same finding, a new fix plan
        assert record is not None and (record.fix_plan, record.rounds) == ("p1-fix2", 2)
        assert record.plans == ["p1", "p1-fix2"]  # the closed p1-fix1 ran nothing
        assert (await run.parts.plans.latest(sid, "p1-fix1")).status == "rejected"
        answer = await run.say(sid, "/qa override")
        assert answer == "1 finding(s) overridden (listed as deferred); testing"
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert run.engine.session_phase(sid).value == "complete"  # the rejection did not stop it
        [said] = await run.summaries(sid)
        summary = said["summary"]
        assert summary["validation"]["clean"] is False
        [overridden] = summary["validation"]["overridden"]
        assert overridden.startswith("pkg/gen.py:1: [ruff F401]")
        assert summary["deferred"] == [
            f"finding overridden by the user: {overridden}",
            "Plan p1, task e1: tests not written: the engineer wrote no file",
        ]
        assert summary["tests"]["status"] == "passed" and summary["tests"]["passed"] == 2
        assert "Validation: 1 finding(s) overridden by the user" in said["text"]
    finally:
        await run.aclose()


async def test_flags_given_before_qa_apply_to_its_next_run(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [*engineer_writes({"pkg/flags.py": FLAGS}, shell=MAKES_GEN), NO_TEST]
    run = QaRun(data_dir, workspace, monkeypatch, turns, offline_architect=True)
    try:
        sid = await run.session()
        assert await run.say(sid, "/qa override") == "override: applies to the next session QA"
        assert await run.say(sid, "/qa skip-tests") == "skip-tests: applies to the next session QA"
        assert "/qa takes one of" in await run.say(sid, "/qa later")
        assert "no session QA is under way" in await run.say(sid, "/qa stop")
        await run.submit_plan(sid, plan(node("e1")))
        await run.say(sid, "/plan approve p1")
        record = await run.settle(sid)
        assert record is not None and record.stage == "complete", record
        assert record.tests is None and record.rounds == 0  # no test ran, no fix plan
        [said] = await run.summaries(sid)
        assert len(said["summary"]["deferred"]) == 3  # override, skip-tests, no test written
    finally:
        await run.aclose()
