"""A transcript that runs long keeps about a thousand messages in the widget: the oldest
go from the top (their drawn blocks with them), the view stays where it is, and
scrolling to the top reads them back from the archive, none lost."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.events import MessageAppended
from backend.messages import Message, MessageType
from sylk_tui.app import SylkApp
from tests.tui.support import FROZEN_NOW, main_screen, settle, wait_for
from widgets.transcript import Transcript
from widgets.transcript.trim import KEPT_MESSAGES, TRIM_BATCH

EngineMessage = Message[dict[str, Any]]
SESSION = "s" * 32
HELD_AT_MOST = KEPT_MESSAGES + TRIM_BATCH


def said(n: int, session_id: str = SESSION) -> EngineMessage:
    return EngineMessage(
        id=f"m{n:05d}",
        session_id=session_id,
        source="architect",
        type=MessageType.AGENT_REPLY,
        payload={"text": f"line {n} of a long run"},
        timestamp=FROZEN_NOW + timedelta(seconds=n),
    )


class TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript", tz=UTC)


async def test_appending_past_the_bound_drops_the_oldest_and_their_blocks() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show(SESSION, [])
        for n in range(1_500):
            transcript.append(said(n))
        await pilot.pause()
        held = [m.id for m in transcript.messages]
        assert KEPT_MESSAGES <= len(held) < HELD_AT_MOST
        assert held == [said(n).id for n in range(1_500 - len(held), 1_500)]  # newest, in order
        assert transcript.more_above
        assert "older messages load as you scroll up" in transcript.header
        assert transcript.scroll_y == transcript.max_scroll_y  # still following the newest
        # What was dropped keeps nothing drawn.
        assert transcript.drawn_ids() <= set(held)
        # The header, the day's rule over the first held, a line each: laid out afresh.
        assert transcript.line_count == 2 + len(held)


async def test_a_trim_keeps_the_view_still_and_never_drops_what_is_read() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show(SESSION, [said(n) for n in range(HELD_AT_MOST - 10)])
        await wait_for(pilot, lambda: transcript.laid_out, "every message laid out")
        # Reading in the middle: the oldest go, the line on top of the view stays.
        transcript.scroll_to(y=transcript.max_scroll_y // 2, animate=False, immediate=True)
        await pilot.pause()
        top = transcript.render_line(0).text
        for n in range(HELD_AT_MOST - 10, HELD_AT_MOST + 10):
            transcript.append(said(n))
        await pilot.pause()
        assert len(transcript.messages) < HELD_AT_MOST
        assert transcript.render_line(0).text == top
        # Reading the oldest: nothing goes until the view moves on.
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        first = transcript.messages[0].id
        for n in range(HELD_AT_MOST + 10, HELD_AT_MOST + 10 + 2 * TRIM_BATCH):
            transcript.append(said(n))
        await pilot.pause()
        assert transcript.messages[0].id == first
        transcript.scroll_end(animate=False, immediate=True)
        transcript.append(said(HELD_AT_MOST + 10 + 2 * TRIM_BATCH))
        await pilot.pause()
        assert transcript.messages[0].id != first and len(transcript.messages) == KEPT_MESSAGES


async def _read_older(pilot: Pilot[Any], transcript: Transcript) -> None:
    first = transcript.messages[0].id
    transcript.scroll_home(animate=False, immediate=True)
    await wait_for(pilot, lambda: transcript.messages[0].id < first, "older read")


async def test_scrolling_to_the_top_reads_every_dropped_message_back(
    engine: Engine, engine_parts: EngineParts
) -> None:
    session = await engine.create_session("long run")
    app = SylkApp(engine, tz=UTC)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        transcript = main_screen(app).transcript
        await wait_for(pilot, lambda: transcript.session_id == session.id, "the session shown")
        stored = [said(n, session.id) for n in range(1_500)]
        # Committed to the real archive, then announced as the engine does for each.
        await engine_parts.archive.aappend_messages(stored)
        for message in stored:
            engine_parts.events.publish(MessageAppended(session_id=session.id, message=message))
        last = stored[-1].id
        await wait_for(pilot, lambda: transcript.messages[-1].id == last, "all arrived")
        assert len(transcript.messages) < HELD_AT_MOST and transcript.more_above
        while transcript.more_above:
            await _read_older(pilot, transcript)
        assert [m.id for m in transcript.messages] == [m.id for m in stored]  # none lost
