"""Tool blocks in the transcript: header, coloured diff, output tail, folding, selection."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip

from backend.agents.tool_actions import ToolAction, begin_action, finish_action
from backend.engine import Engine, EngineConfig
from backend.events import EngineEvent, QuestionAsked
from backend.messages import Message, MessageType
from sylk_tui.app import SylkApp
from tests.support.scripted import execute
from tests.tui.support import main_screen, settle, wait_for
from widgets.transcript import Transcript

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 3\n"


def _ok(result: dict[str, Any]) -> str:
    return json.dumps({"op": "x", "ok": True, "result": result, "meta": {"trace_id": "t"}})


def actions() -> list[ToolAction]:
    read_args = {"op": "engineer.file.read", "args": {"path": "app.py"}}
    read = begin_action("r", "execute", read_args, 8)
    edit = begin_action(
        "e", "engineer__file__edit", {"path": "app.py", "old_content": "1", "new_content": "2"}, 8
    )
    run = begin_action("c", "engineer__shell__run", {"command": "pytest -q"}, 8)
    result = {
        "exit_code": 1,
        "stdout": "F.\n1 failed, 1 passed\n",
        "stderr": "",
        "duration_ms": 1500,
    }
    return [
        finish_action(read, _ok({"path": "app.py", "content": "x = 1\ny = 3\n"}), False),
        finish_action(edit, _ok({"path": "app.py", "replacements": 1, "diff": DIFF}), False),
        finish_action(run, _ok(result), False),
    ]


def reply(message_id: str = "m1") -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        id=message_id,
        session_id="s1",
        source="engineer",
        type=MessageType.AGENT_REPLY,
        payload={
            "text": "Reading.\n\nx is 2 now; one test still fails.",
            "actions": [a.stored() for a in actions()],
        },
        timestamp=NOW,
    )


class _TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(tz=UTC)


def _text(strip: Strip) -> str:
    return strip.text.rstrip()


def _line(transcript: Transcript, needle: str) -> Strip:
    return next(s for s in transcript.lines() if needle in s.text)


def _style_of(strip: Strip, needle: str) -> Style:
    segment = next(seg for seg in strip if needle in seg.text)
    assert segment.style is not None
    return segment.style


async def test_blocks_name_the_op_and_path_and_colour_the_diff() -> None:
    app = _TranscriptApp()
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show("s1", [reply()])
        await pilot.pause()
        texts = [_text(s) for s in transcript.lines()]
        read = next(t for t in texts if "engineer.file.read" in t)
        # A read is folded, with a summary; the edit and the command are open.
        assert "▸ engineer.file.read  app.py  ok · 2 lines" in read
        assert any("▾ engineer.file.edit  app.py  ok" in t for t in texts)
        assert any("▾ engineer.shell.run  pytest -q  exit 1 · 1.5s" in t for t in texts)
        assert any(t.endswith("1 failed, 1 passed") for t in texts)
        # Text comes where the agent wrote it: "Reading." before the blocks, the rest after.
        assert texts.index(read) == 2 and texts[1].endswith("Reading.")
        assert texts[-1].endswith("x is 2 now; one test still fails.")
        style = transcript.get_component_rich_style
        added, removed = _line(transcript, "+x = 2"), _line(transcript, "-x = 1")
        assert _style_of(added, "+x = 2").color == style("transcript--diff-add").color
        assert _style_of(removed, "-x = 1").color == style("transcript--diff-del").color
        hunk = _line(transcript, "@@ -1,2")
        assert _style_of(hunk, "@@").color == style("transcript--diff-hunk").color
        assert style("transcript--diff-add").color != style("transcript--diff-del").color


async def test_keys_and_clicks_fold_and_select_blocks() -> None:
    app = _TranscriptApp()
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show("s1", [reply()])
        await pilot.pause()

        def shown(needle: str) -> bool:
            return any(needle in s.text for s in transcript.lines())

        assert shown("+x = 2") and not shown("x = 1\ny")
        # No selection: the newest block (the command) folds first.
        assert transcript.toggle_selected()
        assert not shown("1 failed, 1 passed") and transcript.folds.selection == ("m1", 2)
        transcript.focus()
        await pilot.press("[")  # select the edit, enter folds it
        assert transcript.folds.selection == ("m1", 1)
        await pilot.press("enter")
        assert not shown("+x = 2")
        # Every block unfolds, then every block folds.
        assert transcript.toggle_all_blocks()
        assert shown("+x = 2") and shown("1 failed") and shown("2 lines")
        assert not transcript.toggle_all_blocks()
        assert not shown("+x = 2") and not shown("1 failed")
        # A click on a header unfolds that block.
        line = transcript.header_line(("m1", 1))
        assert line is not None
        await pilot.click(Transcript, offset=(20, line - round(transcript.scroll_y)))
        assert shown("+x = 2") and transcript.folds.selection == ("m1", 1)
        copied = transcript.selected_text()
        assert copied is not None
        assert copied.startswith("engineer.file.edit  app.py  ok") and "  +x = 2" in copied


async def test_the_app_keys_fold_blocks_from_the_composer(
    tmp_path: Path, engine_config: EngineConfig
) -> None:
    app = SylkApp(Engine(engine_config))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = main_screen(app)
        session_id = screen.transcript.session_id
        assert session_id is not None
        screen.transcript.show(session_id, [reply().model_copy(update={"session_id": session_id})])
        await pilot.pause()
        transcript = screen.transcript
        assert screen.composer.has_focus
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not any("1 failed" in s.text for s in transcript.lines())
        await pilot.press("alt+o")
        await pilot.pause()
        texts = [s.text.strip() for s in transcript.lines()]
        assert "▾ engineer.file.read  app.py  ok" in texts and "2 lines" in texts


LIVE = "printf 'one\\n'; for i in $(seq 1500); do [ -e go ] && break; sleep 0.02; done; echo two"


def _runner_streams() -> bool:
    import inspect

    from backend.workspace.commands import run_command_line

    return "on_output" in inspect.signature(run_command_line).parameters


@pytest.mark.skipif(not _runner_streams(), reason="the command runner has no on_output yet")
async def test_a_running_command_streams_into_its_block_then_the_answer_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_config: EngineConfig
) -> None:
    workspace = engine_config.workspace
    (workspace / "app.py").write_text("x = 1\n")
    script = {
        "turns": [
            {"text": "Running.", "tool_calls": [execute("engineer.shell.run", command=LIVE)]},
            {"text": "It printed two lines."},
        ]
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    monkeypatch.setenv("SYLK_SCRIPT", str(path))
    engine = Engine(engine_config.model_copy(update={"provider": "scripted"}))

    def allow(event: EngineEvent) -> None:  # the approval policy may ask: allow it
        if isinstance(event, QuestionAsked):
            engine.answer_question(event.question_id, "allow")

    app = SylkApp(engine)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        engine.events.add_listener(allow)
        screen = main_screen(app)
        screen.composer.value = "@engineer run it"
        await pilot.press("enter")

        def streaming() -> bool:
            draft = screen.transcript.draft
            lines = [s.text for s in screen.transcript.lines()]
            return (
                draft is not None
                and any("running…" in t for t in lines)
                and any(t.rstrip().endswith("one") for t in lines)
            )

        await wait_for(pilot, streaming, "the command's first line in its running block")
        (workspace / "go").touch()
        await wait_for(pilot, lambda: screen.transcript.draft is None, "the recorded answer")
        texts = [s.text.rstrip() for s in screen.transcript.lines()]
        assert any("engineer.shell.run" in t and "exit 0" in t for t in texts)
        assert any(t.endswith("two") for t in texts)
        assert any(t.endswith("It printed two lines.") for t in texts)  # then the checks


async def test_a_diff_notice_is_coloured_and_escapes_never_reach_the_screen() -> None:
    notice = Message[dict[str, Any]](
        id="n1",
        session_id="s1",
        source="sylk",
        type=MessageType.SYSTEM_NOTICE,
        payload={"text": DIFF, "preformatted": True, "format": "diff"},
        timestamp=NOW,
    )
    hostile = reply("m2").model_copy(
        update={"payload": {"text": "Done \x1b]52;c;cm0gLXJmIH4=\x07here.\x1b[2J"}}
    )
    app = _TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show("s1", [notice, hostile])
        await pilot.pause()
        style = transcript.get_component_rich_style
        added = _line(transcript, "+x = 2")
        assert _style_of(added, "+x = 2").color == style("transcript--diff-add").color
        text = "".join(s.text for s in transcript.lines())
        assert "Done here." in text and "\x1b" not in text and "\x07" not in text
