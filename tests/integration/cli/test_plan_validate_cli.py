"""``sylk plan validate FILE`` from the shell: a valid plan's report, every problem of a bad one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sylk_tui.cli import main

GOOD = {
    "id": "p1", "session_id": "s1", "prompt": "add a --verbose flag",
    "nodes": [
        {"id": "look", "agent": "librarian", "prompt": "find the CLI"},
        {"id": "flag", "agent": "engineer", "prompt": "add it", "depends_on": ["look"]},
    ],
}  # fmt: skip


def test_a_valid_plan_prints_its_layers_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(GOOD))
    assert main(["plan", "validate", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "plan 'p1' is valid" in out and "layer 1: flag" in out


def test_every_problem_is_named_with_its_path_and_the_exit_is_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = json.loads(json.dumps(GOOD))
    bad["nodes"][0]["agent"] = "wizard"
    bad["nodes"][0]["depends_on"] = ["flag"]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(bad))
    assert main(["plan", "validate", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "nodes[0].agent: unknown agent 'wizard'" in err
    assert "look -> flag -> look" in err or "flag -> look -> flag" in err
    assert "Traceback" not in err
    assert main(["plan", "validate", "--json", str(plan)]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert {p["code"] for p in report["problems"]} >= {"unknown_agent"}


def test_a_missing_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "validate", "/nonexistent/plan.json"]) != 0
    assert "cannot read /nonexistent/plan.json" in capsys.readouterr().err
