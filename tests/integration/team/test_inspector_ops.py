"""The Inspector's ops through the engine's gateway, as a model calls them, on a real
project with the real ruff and mypy run in the sandbox."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from tests.integration.team.quality_engine import call, ok, open_engine, refused
from tests.support.scripted import execute


@pytest.fixture
async def engine(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Engine]:
    async for eng in open_engine(data_dir, workspace, monkeypatch):
        yield eng


def _at(report: dict[str, object], file: str) -> list[dict[str, object]]:
    issues = report["issues"]
    assert isinstance(issues, list)
    return [i for i in issues if i["file"] == file]


async def test_a_task_is_validated_by_the_tools_and_offline_compliance_says_not_checked(
    engine: Engine,
) -> None:
    report = await ok(engine, "architect", "inspector.task.validate",
                      paths=["pkg/calc.py", "pkg/halves.py"],
                      criteria=["add() keeps its signature"])  # fmt: skip
    unused = [i for i in _at(report, "pkg/calc.py") if i["code"] == "F401"]
    assert unused and unused[0]["line"] == 1  # the unused `import os`, at pkg/calc.py:1
    assert any(i["category"] == "type" for i in _at(report, "pkg/halves.py"))
    compliance = report["compliance"]
    assert compliance["checked"] is False and "no model" in compliance["reason"]
    assert report["clean"] is False


async def test_issues_report_groups_the_latest_inspection_by_file_with_counts(
    engine: Engine,
) -> None:
    first = await ok(engine, "inspector", "inspector.issues.report")
    assert first["inspected"] is False and "no inspection" in first["message"]
    await ok(engine, "inspector", "inspector.style.check", paths=["pkg/calc.py", "pkg/ugly.py"])
    report = await ok(engine, "inspector", "inspector.issues.report")
    assert report["inspected"] is True and report["op"] == "inspector.style.check"
    assert set(report["by_file"]) == {"pkg/calc.py", "pkg/ugly.py"}
    assert any(i["code"] == "F401" and i["line"] == 1 for i in report["by_file"]["pkg/calc.py"])
    assert sum(report["severity_counts"].values()) == report["total"] > 0
    only = await ok(engine, "inspector", "inspector.issues.report", file="pkg/ugly.py")
    assert set(only["by_file"]) == {"pkg/ugly.py"}


async def test_deep_analysis_covers_the_whole_project_and_says_when_capped(
    engine: Engine,
) -> None:
    report = await ok(engine, "inspector", "inspector.analysis.deep")
    files = {i["file"] for i in report["issues"]}
    assert {"pkg/calc.py", "pkg/halves.py", "pkg/ugly.py"} <= files  # not just changed files
    assert report["capped"] is False and "tests/test_calc.py" in report["files"]
    capped = await ok(engine, "inspector", "inspector.analysis.deep", max_files=2)
    assert capped["capped"] is True and len(capped["files"]) <= 2
    assert capped["files_found"] > 2 and "first 2 of" in capped["note"]


async def test_bad_input_gets_typed_errors(engine: Engine, workspace: Path) -> None:
    code, message, details = await refused(engine, "architect", "inspector.task.validate",
                                           task_id="t9")  # fmt: skip
    assert code == "NOT_FOUND" and details["reason"] == "unknown_task" and "t9" in message
    (workspace.parent / "outside.py").write_text("import os\n")
    code, message, _ = await refused(engine, "inspector", "inspector.task.validate",
                                     paths=["../outside.py"])  # fmt: skip
    assert code == "VALIDATION_ERROR" and "outside the workspace" in message
    code, _, _ = await refused(engine, "inspector", "inspector.analysis.deep", paths=["/etc"])
    assert code == "VALIDATION_ERROR"
    code, _, _ = await refused(engine, "inspector", "inspector.issue.explain", issue="")
    assert code == "VALIDATION_ERROR"


async def test_checks_wait_for_approval_and_with_nobody_to_ask_are_refused(
    engine: Engine,
) -> None:
    out = await call(engine, "inspector", "inspector.analysis.deep", mode=None)
    assert not out.ok and out.error is not None
    assert out.error.details["reason"] == "approval_required"


async def test_explain_asks_ruff_itself_then_the_table_and_never_a_workspace_binary(
    engine: Engine, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An attacker's ruff inside the workspace, first on PATH: it must never run.
    trap = workspace / "bin" / "ruff"
    trap.parent.mkdir()
    trap.write_text(f"#!/bin/sh\ntouch {workspace / 'PWNED'}\necho owned\n")
    trap.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(trap.parent), os.environ["PATH"]]))
    told = await ok(engine, "inspector", "inspector.issue.explain", issue="E501 in pkg/a.py:3")
    assert told["source"] == "tool" and told["tool"] == "ruff" and told["code"] == "E501"
    assert "line-length" in told["explanation"] and "owned" not in told["explanation"]
    assert not (workspace / "PWNED").exists()
    typed = await ok(engine, "inspector", "inspector.issue.explain", issue="arg-type")
    assert typed["source"] == "builtin table" and typed["tool"] == "mypy"
    eslint = await ok(engine, "inspector", "inspector.issue.explain", issue="no-unused-vars")
    assert eslint["tool"] == "eslint"


async def test_explain_names_where_the_latest_inspection_saw_the_issue(engine: Engine) -> None:
    await ok(engine, "inspector", "inspector.style.check", paths=["pkg/calc.py"])
    told = await ok(engine, "inspector", "inspector.issue.explain", issue="F401")
    assert told["in_latest_inspection"] == ["pkg/calc.py:1"]


async def test_an_unknown_rule_offline_is_a_typed_not_found(engine: Engine) -> None:
    code, message, details = await refused(engine, "inspector", "inspector.issue.explain",
                                           issue="frobnicate-widgets")  # fmt: skip
    assert code == "NOT_FOUND" and details["reason"] == "no_explanation"
    assert "no model" in message


VERDICT = {"criteria": [
    {"criterion": "add() has a docstring", "met": False, "why": "add has no docstring"},
    {"criterion": "add() keeps its signature", "met": True, "why": "unchanged"},
]}  # fmt: skip


async def test_with_a_model_the_inspector_checks_compliance_and_explains_the_rest(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns: list[dict[str, Any]] = [
        {"expect": "compliance criterion", "text": json.dumps(VERDICT)},
        {"expect": "frobnicate-widgets", "text": "It means the widgets were frobnicated."},
    ]
    async for engine in open_engine(data_dir, workspace, monkeypatch, turns):
        report = await ok(engine, "architect", "inspector.task.validate", paths=["pkg/calc.py"],
                          criteria=[c["criterion"] for c in VERDICT["criteria"]])  # fmt: skip
        assert report["compliance"]["checked"] is True
        assert report["compliance"]["verdict"] == "not_met"
        compliance = [i for i in report["issues"] if i["category"] == "compliance"]
        assert len(compliance) == 1 and "docstring" in compliance[0]["message"]
        assert compliance[0]["file"] == "pkg/calc.py"
        told = await ok(engine, "guide", "inspector.issue.explain", issue="frobnicate-widgets")
        assert told["source"] == "model" and "frobnicated" in told["explanation"]
        # The inspector itself is not asked to wait on its own turn: it judges the diff.
        mine = await ok(engine, "inspector", "inspector.task.validate", paths=["pkg/calc.py"],
                        criteria=["add() has a docstring"])  # fmt: skip
        assert mine["compliance"]["checked"] is False
        assert "you are the inspector" in mine["compliance"]["reason"]
        assert "diff" in mine["compliance"]  # what it judges: no change recorded here


EXTRA = 'def triple(x: int) -> int:\n    """Three times x."""\n    return 3 * x\n'


async def test_a_pipeline_task_is_validated_on_the_files_it_changed(
    data_dir: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns: list[dict[str, Any]] = [
        {"text": "Writing.", "tool_calls": [
            execute("engineer.file.write", path="pkg/extra.py", content=EXTRA)]},
        {"text": "Added pkg/extra.py."},
        {"expect": "Write tests for task q1", "text": "No new test: validation comes next."},
        {"expect": "+def triple(x: int)", "text": json.dumps({"criteria": [
            {"criterion": "triple() is documented", "met": True, "why": "it has a docstring"}]})},
    ]  # fmt: skip
    async for engine in open_engine(data_dir, workspace, monkeypatch, turns):
        session = await engine.ensure_session()
        await engine.approval_command(session.id, "auto")
        await engine.submit(session.id, "@engineer add triple() in pkg/extra.py")
        report = await ok(engine, "architect", "inspector.task.validate", task_id="q1",
                          criteria=["triple() is documented"])  # fmt: skip
        assert report["files"] == ["pkg/extra.py"] and report["task_id"] == "q1"
        assert report["compliance"]["verdict"] == "met" and report["clean"] is True


async def test_deep_analysis_walks_no_link_out_of_the_workspace(
    engine: Engine, workspace: Path
) -> None:
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    (outside / "secret.py").write_text("import os\n")
    (workspace / "pkg" / "door").symlink_to(outside, target_is_directory=True)
    (workspace / "lead").symlink_to(outside, target_is_directory=True)
    whole = await ok(engine, "inspector", "inspector.analysis.deep")
    named = await ok(engine, "inspector", "inspector.analysis.deep", paths=["lead", "pkg/door"])
    for report in (whole, named):
        assert not any("secret" in f for f in report["files"])
        assert not any("secret" in i["file"] for i in report["issues"])
