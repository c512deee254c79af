"""``@engineer TEXT`` outside a plan runs as a one-node pipeline through the engine: the
scripted engineer's first attempt fails Sylk's real ruff, the finding reaches its second
turn, which fixes it; edits made in a ``batch`` are checked too; a workspace with nothing
to check says so; ``engineer.task.execute`` takes the same path and refuses to start a
pipeline while one runs (an engineer inside a pipeline cannot start another)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from backend.agents.tool_actions import actions_from_payload
from backend.skills.builtin.catalog import agent_context
from tests.integration.pipelines.task_runs import (
    BAD,
    Desk,
    python_project,
    script,
    writes,
)
from tests.support.scripted import read_then_edit

FINDING = "pkg/flags.py:1: [ruff F401]"


def fix_turns() -> list[dict[str, object]]:
    fix = read_then_edit("pkg/flags.py", "import os\n\n", "", said="Removed the unused import.")
    fix[0]["expect"] = FINDING  # the inspector's finding, file:line, in the second request
    return fix


async def test_a_lint_error_is_fixed_on_the_second_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    script(tmp_path / "s.json", monkeypatch, [
        # The project has no test suite: nobody asks the engineer for tests.
        *writes("pkg/flags.py", BAD, expect="add a VERBOSE flag"), *fix_turns(),
    ])  # fmt: skip
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "@engineer add a VERBOSE flag to pkg/flags.py")
        assert str(reply["text"]).endswith("Removed the unused import.")  # the engineer's answer
        assert reply["stop"] == "final"
        checks = await desk.checks(sid)  # then what the checks found
        assert checks["text"] == (
            "Checks (task q1, 2 loop(s)): inspector passed (ruff (formatter), ruff (linter)); "
            "tester ran no test (no_tests)"
        )
        assert (checks["pipeline"], checks["state"], checks["loops"]) == ("q1", "completed", 2)
        assert (project / "pkg" / "flags.py").read_text() == "VERBOSE = True\n"
        moves = [n.split(":")[0] for n in desk.notices("Task q1: ")]
        assert moves == [
            "running (loop 1)", "inspecting (loop 1)",
            "running (loop 2)", "inspecting (loop 2)", "testing (loop 2)",
            "completed (loop 2)",
        ]  # fmt: skip
        # Each engineer turn is in the transcript; the checks' answer comes last.
        said = [m.payload.get("text") for m in await desk.engine.transcript(sid)]
        assert [str(t).splitlines()[-1] for t in said[-3:-1]] == [
            "Wrote pkg/flags.py.", "Removed the unused import."]  # fmt: skip
        query = await desk.say(sid, "/task q1 query what happened?")
        assert str(query["text"]).startswith("Task q1: completed (loop 2/3)")
        assert "Files touched: pkg/flags.py" in str(query["text"])
    finally:
        await desk.aclose()


async def test_edits_made_inside_a_batch_are_the_turns_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    calls = [
        {"verb": "execute", "op": "engineer.file.write", "dry_run": False,
         "args": {"path": "pkg/flags.py", "content": BAD}},
        {"verb": "execute", "op": "engineer.file.write", "dry_run": False,
         "args": {"path": "pkg/names.py", "content": 'NAME = "x"\n'}},
        {"verb": "execute", "op": "engineer.file.write", "dry_run": True,  # changes nothing
         "args": {"path": "pkg/dry.py", "content": "import sys\n"}},
    ]  # fmt: skip
    script(tmp_path / "s.json", monkeypatch, [
        {"text": "Writing both.", "tool_calls": [{"name": "batch", "arguments": {"calls": calls}}]},
        {"text": "Wrote them."},
        *fix_turns(),  # expects the finding on the file the batch wrote
    ])  # fmt: skip
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("auto-edit")
        await desk.say(sid, "@engineer add flags and names")
        checks = await desk.checks(sid)
        assert checks["state"] == "completed"
        assert checks["files"] == ["pkg/flags.py", "pkg/names.py"]
        assert not (project / "pkg" / "dry.py").exists()
        first = next(m for m in await desk.engine.transcript(sid)
                     if str(m.payload.get("text")).endswith("Wrote them."))  # fmt: skip
        [batch] = actions_from_payload(first.payload)
        assert (batch.op, batch.files) == ("batch", ["pkg/flags.py", "pkg/names.py"])
    finally:
        await desk.aclose()


async def test_with_nothing_to_check_the_answer_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    script(tmp_path / "s.json", monkeypatch, writes("notes/todo.md", "- ship it\n"))
    desk = Desk(data_dir, workspace)
    try:
        sid = await desk.session("auto-edit")
        reply = await desk.say(sid, "@engineer write the todo note")
        assert reply["text"] == "Writing.\n\nWrote notes/todo.md."
        assert (await desk.checks(sid))["text"] == (
            "Checks (task q1, 1 loop(s)): nothing was checked — no linter or test ran for "
            "this project."
        )
        assert (workspace / "notes" / "todo.md").read_text() == "- ship it\n"
    finally:
        await desk.aclose()


async def test_task_execute_runs_a_pipeline_and_refuses_a_second_while_one_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    project = python_project(workspace, monkeypatch)
    script(tmp_path / "s.json", monkeypatch, writes("pkg/flags.py", "VERBOSE = True\n"))
    desk = Desk(data_dir, project)
    try:
        sid = await desk.session("ask")  # the write waits for the user: a pipeline runs
        ctx = agent_context("engineer", sid, project)
        gateway = desk.parts.gateway
        args = {"task_id": "t7", "instructions": "add a VERBOSE flag"}
        running = asyncio.create_task(gateway.execute(ctx, "engineer.task.execute", args))
        asked = await desk.question(sid)
        again = await gateway.execute(ctx, "engineer.task.execute", {**args, "task_id": "t8"})
        assert again.error is not None and again.error.code.value == "CONFLICT"
        assert again.error.details["reason"] == "pipeline_running"
        assert "/task t7 prompt" in again.error.message
        refused = await desk.say(sid, "@engineer also add a QUIET flag")
        assert refused["error"] == "EngineerBusyError" and "task t7 runs" in refused["text"]
        desk.parts.questions.answer(asked.question_id, "allow")
        done = await running
        assert done.ok, done.error
        assert (done.result["task_id"], done.result["state"], done.result["success"]) == (
            "t7", "completed", True)  # fmt: skip
        assert done.result["files"] == ["pkg/flags.py"]
        taken = await gateway.execute(ctx, "engineer.task.execute", args)
        assert taken.error is not None and taken.error.details["reason"] == "task_id_taken"
    finally:
        await desk.aclose()
