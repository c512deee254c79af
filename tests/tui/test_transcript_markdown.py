"""The transcript draws answers as Markdown while they stream, redraws only the tail,
says who answered and by which tier, marks cut answers, copies, and reads older history
from the archive when scrolled to the top."""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult

from backend.archive.store import Archive
from backend.messages import Message, MessageType
from backend.sessions.models import Session, SessionState
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, RecordingApp, main_screen, settle, wait_for
from widgets.transcript import Transcript
from widgets.transcript.markdown_render import split_blocks

EngineMessage = Message[dict[str, Any]]
SESSION = "s" * 32

STREAMED = """## Why test_sync is flaky

The watcher **debounces** for 50 ms and the test asserts after `20 ms`.

| step | waits |
|------|-------|
| watcher | 50 ms |
| test | 20 ms |

```python
def test_sync(tmp_path):
    wait_for_debounce()
```

1. Wait for the debounce
2. Drop the sleep
"""


def answer(text: str, n: int = 0, **payload: Any) -> EngineMessage:
    return EngineMessage(
        id=f"a{n:04d}",
        session_id=SESSION,
        source="architect",
        type=MessageType.AGENT_REPLY,
        payload={"text": text, **payload},
        timestamp=FROZEN_NOW + timedelta(seconds=n),
    )


class TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript", tz=UTC)


def shown_text(transcript: Transcript) -> list[str]:
    return [strip.text.rstrip() for strip in transcript.lines()]


async def test_a_streamed_answer_is_drawn_as_markdown_as_it_arrives() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(90, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show(SESSION, [])
        for end in range(40, len(STREAMED) + 1, 40):  # the answer arrives in pieces
            transcript.set_draft(answer(STREAMED[:end]))
            await pilot.pause()
        transcript.set_draft(answer(STREAMED))
        await pilot.pause()
        lines = shown_text(transcript)
        body = "\n".join(lines)
        assert "Why test_sync is flaky" in body and "##" not in body
        assert "debounces" in body and "**" not in body and "`" not in body
        assert any("watcher" in line and "50 ms" in line for line in lines)  # a table row
        assert any("─" in line for line in lines[2:])  # the table's rule
        assert any("def test_sync(tmp_path):" in line for line in lines)
        assert "```" not in body
        assert any(line.strip().endswith("1 Wait for the debounce") for line in lines)
        # Headings, bold and code are styled, not just stripped of their marks.
        styled = {
            seg.text.strip(): seg.style
            for strip in transcript.lines()
            for seg in strip
            if seg.text.strip() in ("Why test_sync is flaky", "debounces", "20 ms")
        }
        assert (
            styled["Why test_sync is flaky"] is not None and styled["Why test_sync is flaky"].bold
        )
        assert styled["debounces"] is not None and styled["debounces"].bold
        assert styled["20 ms"] is not None and styled["20 ms"].bgcolor is not None


async def test_only_the_tail_of_a_streaming_answer_is_drawn_again() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(90, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show(SESSION, [])
        drafts = transcript.markdown[1]
        transcript.set_draft(answer(STREAMED))
        await pilot.pause()
        blocks = len(split_blocks(STREAMED))
        assert drafts.renders == blocks
        tail = STREAMED + "\nAnd one more paragraph"
        for extra in (" being", " written", " now."):
            tail += extra
            transcript.set_draft(answer(tail))
            await pilot.pause()
        # Three repaints: the finished blocks were drawn once, the new tail once each.
        assert drafts.renders == blocks + 3
        assert "And one more paragraph being written now." in "\n".join(shown_text(transcript))


async def test_an_answer_names_its_agent_and_tier_and_marks_where_it_was_cut() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(90, 30)) as pilot:
        transcript = app.query_one(Transcript)
        stopped = answer(
            "Half an **answer**\n\n(stopped)",
            1,
            agent="architect",
            tier="pattern",
            stop="cancelled",
        )
        truncated = answer(
            "Cut at the limit\n\n(truncated)", 2, agent="librarian", tier="model", stop="truncated"
        )
        whole = answer("All of it.", 3, agent="engineer", tier="dsl", stop="final")
        transcript.show(SESSION, [stopped, truncated, whole])
        await pilot.pause()
        lines = [line.strip() for line in shown_text(transcript)]
        assert "(stopped) · architect · pattern tier" in lines
        assert "(truncated) · librarian · model tier" in lines
        assert "engineer · dsl tier" in lines
        assert sum("(stopped)" in line for line in lines) == 1  # the text's copy is dropped
        assert sum("(truncated)" in line for line in lines) == 1
        # The marker is drawn in its own style, apart from who answered.
        marker = transcript.get_component_rich_style("transcript--marker")
        segments = [seg for strip in transcript.lines() for seg in strip]
        assert any(seg.text == "(stopped)" and seg.style == marker for seg in segments)


async def test_copy_takes_the_selected_block_else_the_newest_answer() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(90, 30)) as pilot:
        transcript = app.query_one(Transcript)
        action = {
            "id": "c1",
            "tool": "bash",
            "op": "bash",
            "title": "ls -la",
            "status": "ok",
            "output": "total 0",
            "at": 0,
        }
        first = answer("Listing", 1, actions=[action])
        last = answer("## Done\n\nThe **list** is empty.", 2)
        transcript.show(SESSION, [first, last])
        transcript.focus()
        await pilot.pause()
        await pilot.press("c")
        assert app.clipboard == "## Done\n\nThe **list** is empty."  # the Markdown source
        transcript.action_select_block(-1)
        await pilot.press("c")
        assert "ls -la" in app.clipboard


async def test_alt_y_copies_the_newest_answer_and_says_so(
    data_dir: Path, workspace: Path, frozen_clock: Any
) -> None:
    seed(data_dir, workspace, count=3)
    app = RecordingApp(_engine(data_dir, workspace), clock=frozen_clock, tz=UTC)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: main_screen(app).transcript.messages, "the transcript")
        await pilot.press("alt+y")
        assert app.clipboard == "answer 2 with **bold**"
        assert ("information", "Copied architect's answer (1 line).") in app.notices


def seed(data_dir: Path, workspace: Path, *, count: int) -> None:
    session = Session(
        id=SESSION,
        name="long",
        state=SessionState.ACTIVE,
        workspace=str(workspace),
        created_at=FROZEN_NOW - timedelta(days=1),
        last_active_at=FROZEN_NOW,
    )
    messages = [
        answer(f"answer {n} with **bold**", n, agent="architect", tier="pattern")
        for n in range(count)
    ]
    archive = Archive(data_dir)
    try:
        archive.save_sessions([session])
        archive.append_messages(messages)
    finally:
        archive.close()


def _engine(data_dir: Path, workspace: Path) -> Any:
    from backend.engine import Engine, EngineConfig

    return Engine(EngineConfig(data_dir=data_dir, workspace=workspace))


async def test_scrolling_to_the_top_reads_older_history_from_the_archive(
    data_dir: Path, workspace: Path, frozen_clock: Any
) -> None:
    seed(data_dir, workspace, count=450)
    app = SylkApp(_engine(data_dir, workspace), clock=frozen_clock, tz=UTC, transcript_limit=50)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        transcript = main_screen(app).transcript
        await wait_for(pilot, lambda: len(transcript.messages) == 50, "the newest 50 shown")
        assert transcript.more_above and transcript.messages[0].id == "a0400"
        assert "older messages load as you scroll up" in transcript.header
        transcript.scroll_home(animate=False, immediate=True)
        await wait_for(pilot, lambda: len(transcript.messages) == 250, "200 older read")
        assert transcript.messages[0].id == "a0200" and transcript.more_above
        assert [m.id for m in transcript.messages] == [f"a{n:04d}" for n in range(200, 450)]
        assert transcript.scroll_y > 0  # the view stayed on what it showed
        transcript.scroll_home(animate=False, immediate=True)
        await wait_for(pilot, lambda: len(transcript.messages) == 450, "the rest read")
        assert not transcript.more_above and transcript.header == ""
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot)
        assert len(transcript.messages) == 450  # nothing more asked for, nothing repeated


def test_the_markdown_parser_and_pygments_load_at_the_first_answer_not_at_start() -> None:
    import subprocess
    import sys

    heavy = ("markdown_it", "pygments", "rich.markdown", "rich.syntax")
    probe = (
        "import sys\n"
        "import sylk_tui.app\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "from rich.style import Style\n"
        "from widgets.transcript.markdown_render import MarkdownRenderer\n"
        "MarkdownRenderer(lambda _name: Style()).rows('## a *b*', 40, Style())\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    at_start, after_answer = done.stdout.strip().splitlines()
    assert at_start == "[]"
    assert "markdown_it" in after_answer and "pygments" in after_answer
