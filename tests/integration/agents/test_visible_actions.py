"""What a turn's tool calls leave behind: actions stored with the answer, live output,
and the "(stopped)" / "(truncated)" marks, through a real engine and real handlers.

The model is the scripted provider; the edit and the command run through the real
gateway, the real file handler and the real command runner (a real shell).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from backend.agents.tool_actions import actions_from_payload
from backend.config.approvals import ApprovalMode, ApprovalSettings
from backend.config.settings import load_config
from backend.engine import Engine, EngineConfig, EngineParts
from backend.engine.build import build
from backend.events import AgentStepEvent, EngineEvent, QuestionAsked
from tests.support.engine_env import engine_env
from tests.support.polling import finishes, until
from tests.support.scripted import execute, read_then_edit

COMMAND = "printf 'one\\n'; printf 'two\\n' >&2; exit 3"
# Prints, then waits (a bounded while) until the test has seen the first line live.
LIVE_COMMAND = (
    "printf 'one\\n'; for i in $(seq 1500); do [ -e go ] && break; sleep 0.02; done; "
    "printf 'two\\n'"
)


SCRIPT = {
    "turns": [
        *read_then_edit("app.py", "x = 1", "x = 2", said="")[:2],
        {"tool_calls": [execute("engineer.shell.run", command=COMMAND, timeout_s=60)]},
        {"text": "Done: x is 2 and the check exits 3."},
    ]
}


async def _engine(
    data_dir: Path, workspace: Path, script: dict[str, Any]
) -> tuple[Engine, EngineParts]:
    path = workspace.parent / "script.json"
    path.write_text(json.dumps(script))
    settings = load_config(None, env=engine_env(SYLK_SCRIPT=str(path)))
    settings = settings.model_copy(update={"approvals": ApprovalSettings(mode=ApprovalMode.AUTO)})
    config = EngineConfig(data_dir=data_dir, workspace=workspace, provider="scripted")
    parts = build(config, settings)
    return Engine.from_parts(parts), parts


@pytest.fixture
async def scripted(data_dir: Path, workspace: Path) -> AsyncIterator[tuple[Engine, EngineParts]]:
    (workspace / "app.py").write_text("x = 1\n")
    engine, parts = await _engine(data_dir, workspace, SCRIPT)
    try:
        yield engine, parts
    finally:
        await engine.aclose()


def _allow_every_approval(engine: Engine) -> None:
    """Be the user, allowing whatever the approval policy asks about."""
    engine.attach_questions()

    def allow(event: EngineEvent) -> None:
        if isinstance(event, QuestionAsked):
            engine.answer_question(event.question_id, "allow")

    engine.events.add_listener(allow)


async def test_an_edit_keeps_its_diff_and_a_command_its_exit_code_and_output(
    scripted: tuple[Engine, EngineParts], workspace: Path
) -> None:
    engine, parts = scripted
    _allow_every_approval(engine)
    session = await engine.ensure_session()
    reply = (await finishes(engine.submit(session.id, "@engineer set x to 2"), what="turn"))[-1]
    assert reply.payload["stop"] == "final", reply.payload
    assert (workspace / "app.py").read_text() == "x = 2\n"

    read, edit, command = actions_from_payload(reply.payload)
    assert (read.op, read.title, read.status, read.kind) == (
        "engineer.file.read", "app.py", "ok", "other",
    )  # fmt: skip
    assert (edit.op, edit.title, edit.kind, edit.status) == (
        "engineer.file.edit", "app.py", "edit", "ok",
    )  # fmt: skip
    assert edit.diff is not None and "-x = 1" in edit.diff and "+x = 2" in edit.diff
    assert (command.op, command.kind, command.exit_code) == ("engineer.shell.run", "command", 3)
    assert command.output == "one\ntwo" and command.title == COMMAND
    assert command.failed and command.marker == "exit 3"
    # Where each call was made in the answer: after "Reading.", after "Editing.".
    text = reply.payload["text"]
    assert text[: read.at] == "Reading." and text[: edit.at] == "Reading.\n\nEditing."
    assert command.at == edit.at
    # The archive keeps the answer with its actions, and each call's two steps.
    # (@engineer runs as a one-node pipeline: its checks' notice comes after the answer.)
    stored_reply = (await engine.transcript(session.id))[-2]
    assert stored_reply.payload["actions"] == reply.payload["actions"]
    stored = [row["kind"] for row in parts.archive.load_steps(session.id)]
    assert stored.count("tool_call") == stored.count("tool_result") == 3


def _runner_streams() -> bool:
    from backend.workspace.commands import run_command_line

    return "on_output" in inspect.signature(run_command_line).parameters


@pytest.mark.skipif(not _runner_streams(), reason="the command runner has no on_output yet")
async def test_a_running_commands_output_arrives_while_it_runs(
    data_dir: Path, workspace: Path
) -> None:
    run = execute("engineer.shell.run", command=LIVE_COMMAND, timeout_s=60)
    script = {"turns": [{"tool_calls": [run]}, {"text": "Ran it."}]}
    engine, parts = await _engine(data_dir, workspace, script)
    steps: list[tuple[str, dict[str, Any]]] = []

    def watch(event: EngineEvent) -> None:
        if isinstance(event, AgentStepEvent):
            steps.append((event.step.kind, event.step.data))
            if event.step.kind == "tool_output" and "one" in event.step.data["text"]:
                (workspace / "go").touch()  # seen live: let the command finish

    try:
        _allow_every_approval(engine)
        engine.events.add_listener(watch)
        session = await engine.ensure_session()
        reply = (await finishes(engine.submit(session.id, "@engineer run it"), what="turn"))[-1]
        [action] = actions_from_payload(reply.payload)
        assert action.exit_code == 0 and action.output == "one\ntwo"
        kinds = [kind for kind, _ in steps]
        live = [data for kind, data in steps if kind == "tool_output"]
        # The first line arrived alone, while the command still waited for the test.
        assert live[0] == {"id": action.id, "stream": "stdout", "text": "one\n", "dropped": 0}
        assert "".join(d["text"] for d in live) == "one\ntwo\n"
        assert kinds.index("tool_output") < kinds.index("tool_result")
        assert (workspace / "go").exists()
        # Streamed output is published, never stored: the tool result holds it.
        assert "tool_output" not in [row["kind"] for row in parts.archive.load_steps(session.id)]
    finally:
        await engine.aclose()


async def test_a_stopped_answer_says_so_in_the_archive(data_dir: Path, workspace: Path) -> None:
    script = {"chunk_delay_s": 0.2, "turns": [{"text": "first words " + "more " * 60}]}
    engine, _ = await _engine(data_dir, workspace, script)
    try:
        session = await engine.ensure_session()
        started = asyncio.Event()

        def watch(event: EngineEvent) -> None:
            if isinstance(event, AgentStepEvent) and event.step.kind == "text_delta":
                started.set()

        engine.events.add_listener(watch)
        turn = asyncio.create_task(engine.submit(session.id, "@architect talk a lot"))
        await finishes(started.wait(), what="the first words")
        assert engine.cancel_turn(session.id)
        reply = (await finishes(turn, what="the stopped turn"))[-1]
        assert reply.payload["stop"] == "cancelled"
        assert reply.payload["text"].startswith("first")
        assert reply.payload["text"].endswith("\n\n(stopped)")
        stored = (await engine.transcript(session.id))[-1]
        assert stored.payload["text"] == reply.payload["text"]
    finally:
        await engine.aclose()


async def test_a_truncated_answer_says_so_and_runs_no_cut_tool_call(
    data_dir: Path, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    cut = {
        "text": "The answer begins",
        "tool_calls": [execute("engineer.file.write", path="app.py", content="gone")],
        "stop_reason": "max_tokens",
    }
    engine, parts = await _engine(data_dir, workspace, {"turns": [cut]})
    try:
        session = await engine.ensure_session()
        reply = (await engine.submit(session.id, "@engineer write a long answer"))[-1]
        assert reply.payload["stop"] == "truncated"
        assert reply.payload["text"] == "The answer begins\n\n(truncated)"
        assert "actions" not in reply.payload
        assert (workspace / "app.py").read_text() == "x = 1\n"
        kinds = [row["kind"] for row in parts.archive.load_steps(session.id)]
        assert kinds[-1] == "truncated" and "tool_call" not in kinds
    finally:
        await engine.aclose()


async def test_a_command_stopped_midway_is_shown_stopped(data_dir: Path, workspace: Path) -> None:
    wait = execute("engineer.shell.run", command="printf 'busy\\n'; sleep 30", timeout_s=60)
    engine, _ = await _engine(data_dir, workspace, {"turns": [{"tool_calls": [wait]}]})
    try:
        _allow_every_approval(engine)
        session = await engine.ensure_session()
        calls: list[str] = []
        printed: list[str] = []

        def watch(event: EngineEvent) -> None:
            if isinstance(event, AgentStepEvent) and event.step.kind == "tool_call":
                calls.append(event.step.data["id"])
            if isinstance(event, AgentStepEvent) and event.step.kind == "tool_output":
                printed.append(event.step.data["text"])

        engine.events.add_listener(watch)
        turn = asyncio.create_task(engine.submit(session.id, "@engineer wait"))
        await until(lambda: calls, what="the command to start")
        if _runner_streams():
            await until(lambda: printed, what="the command's first line")
        assert engine.cancel_turn(session.id)
        reply = (await finishes(turn, what="the stopped turn"))[-1]
        [action] = actions_from_payload(reply.payload)
        assert action.status == "stopped" and action.kind == "command"
        if _runner_streams():  # what it printed before it was stopped is kept
            assert action.output == "busy\n"
        assert reply.payload["text"] == "Cancelled before any answer arrived."
    finally:
        await engine.aclose()
