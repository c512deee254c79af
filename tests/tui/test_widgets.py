"""The widgets and helpers under the main screen, on their own."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult

from backend.messages import Message, MessageType
from backend.sessions.models import Session
from screens.state.transcript_cache import TranscriptCache
from widgets.line_wrap import wrap_plain
from widgets.session_list import SessionList, ago
from widgets.transcript import Transcript
from widgets.transcript.blocks import render_block

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


def _message(n: int, text: str, session_id: str = "s1") -> Message[dict[str, Any]]:
    return Message[dict[str, Any]](
        id=f"m{n}",
        session_id=session_id,
        source="user" if n % 2 else "architect",
        type=MessageType.USER_INPUT if n % 2 else MessageType.AGENT_REPLY,
        payload={"text": text},
        timestamp=NOW + timedelta(minutes=n),
    )


def test_wrap_plain_breaks_like_rich() -> None:
    """Where no word is wider than the line (folding differs: Rich keeps a space)."""
    rng = random.Random(7)
    words = ["a", "an", "the", "flaky", "session", "transcript", "x", "yy", "zzz"]
    console = Console(width=200)
    for _ in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 60)))
        width = rng.randint(10, 70)
        rich_lines = [line.plain.rstrip() for line in Text(text).wrap(console, width)]
        assert wrap_plain(text, width) == rich_lines, (text, width)


def test_wrap_plain_keeps_indents_newlines_and_folds_long_words() -> None:
    assert wrap_plain("  - one two three", 9) == ["  - one", "two three"]
    assert wrap_plain("a\n\nb", 5) == ["a", "", "b"]
    assert wrap_plain("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]
    assert wrap_plain("日本語のテキスト", 6) == ["日本語", "のテキ", "スト"]


def test_markdown_answers_reflow_soft_breaks_but_keep_blocks() -> None:
    from widgets.transcript.markdown_reflow import reflow_markdown

    source = (
        "## Catch narrowly\n\n"
        "Keep `try` blocks small so you do not\ncatch unrelated errors.\n"
        "- one item that\n  goes on\n- another\n\n"
        "```py\nx = 1\ny = 2\n```\n"
        "| a | b |\n|---|---|\n"
        "hard break  \nkept\n\n"
        "    code one\n    code two\nafter"
    )
    assert reflow_markdown(source).split("\n") == [
        "## Catch narrowly",
        "",
        "Keep `try` blocks small so you do not catch unrelated errors.",
        "- one item that goes on",
        "- another",
        "",
        "```py", "x = 1", "y = 2", "```",
        "| a | b |", "|---|---|",
        "hard break  ", "kept",
        "",
        "    code one", "    code two", "after",
    ]  # fmt: skip


def test_an_answer_wraps_at_the_screen_not_at_its_source_breaks() -> None:
    from widgets.transcript.blocks import GUTTER

    answer = _message(2, "Use `with` for files, locks and\nconnections.\n- a list item that is\n"
                         "  long enough to wrap under its text")  # fmt: skip
    lines = [
        s.text.rstrip() for s in render_block(answer, None, GUTTER + 30, UTC, lambda _: Style())
    ]
    body = [line[GUTTER:] for line in lines[1:]]  # after the day rule
    assert body == [
        "Use `with` for files, locks",
        "and connections.",  # the source's break after "and" is gone
        "- a list item that is long",
        "  enough to wrap under its",  # hangs under the item's text
        "  text",
    ]
    # The user's own lines are shown as typed.
    typed = _message(1, "line one\nline two")
    user = [s.text.rstrip()[GUTTER:] for s in render_block(typed, None, 60, UTC, lambda _: Style())]
    assert user[-2:] == ["line one", "line two"]


def test_ago_is_short_and_never_negative() -> None:
    assert ago(NOW + timedelta(minutes=5), NOW) == "now"
    assert ago(NOW - timedelta(seconds=59), NOW) == "now"
    assert ago(NOW - timedelta(minutes=2), NOW) == "2m ago"
    assert ago(NOW - timedelta(hours=3), NOW) == "3h ago"
    assert ago(NOW - timedelta(days=3), NOW) == "3d ago"
    assert ago(NOW - timedelta(days=30), NOW) == "4w ago"
    assert ago(NOW - timedelta(days=400), NOW) == "1y ago"


def test_transcript_cache_keeps_messages_committed_during_a_read() -> None:
    cache = TranscriptCache(sessions=2, messages=3)
    cache.begin("s1")
    early, late = _message(1, "early"), _message(2, "late")
    cache.append(late)  # committed while the read was running
    assert cache.complete("s1", [early, late]) == [early, late]  # read saw it: no repeat
    cache.append(_message(3, "after"))
    cache.append(_message(4, "more"))
    tail = cache.get("s1")
    assert tail is not None and [m.id for m in tail] == ["m2", "m3", "m4"]  # limited to 3
    cache.begin("s2")
    assert cache.complete("s2", None) is None and not cache.loading("s2")
    cache.put("s2", [])
    cache.put("s3", [])
    assert "s1" not in cache and len(cache) == 2  # least recently used goes first


class _TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(tz=UTC)


async def test_transcript_lays_out_the_newest_first_then_the_rest() -> None:
    rng = random.Random(3)
    words = ["the", "quick", "session", "agent", "archive", "transcript", "wraps", "lazily"]
    messages = [
        _message(n, " ".join(rng.choice(words) for _ in range(rng.randint(5, 90))))
        for n in range(200)
    ]
    app = _TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show("s1", messages)
        assert not transcript.laid_out  # older messages still have estimated heights
        assert transcript.scroll_y == transcript.max_scroll_y  # the newest is in view
        for _ in range(200):
            if transcript.laid_out:
                break
            await pilot.pause(0.02)
        assert transcript.laid_out
        width = transcript.scrollable_content_region.width
        style = transcript.get_component_rich_style
        exact = sum(
            len(render_block(m, messages[n - 1] if n else None, width, UTC, style))
            for n, m in enumerate(messages)
        )
        assert transcript.line_count == exact
        assert transcript.scroll_y == transcript.max_scroll_y  # still at the bottom
        # A message of another session is ignored; one of this session is added.
        transcript.append(_message(500, "elsewhere", session_id="s2"))
        transcript.append(_message(501, "appended"))
        assert transcript.messages[-1].id == "m501"


class _ListApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionList(clock=lambda: NOW)


async def test_session_list_updates_one_row_in_place() -> None:
    sessions = [
        Session(name=f"s{n}", workspace="/tmp", last_active_at=NOW - timedelta(minutes=n))
        for n in range(1, 6)
    ]
    app = _ListApp()
    async with app.run_test(size=(60, 10)) as pilot:
        session_list = app.query_one(SessionList)
        session_list.set_sessions(sessions)
        session_list.viewed_id = sessions[2].id
        session_list.foreground_id = sessions[2].id
        await pilot.pause()
        assert session_list.cursor == 2
        renamed = sessions[1].model_copy(update={"name": "renamed"})
        session_list.upsert(renamed)
        assert [s.name for s in session_list.sessions] == ["s1", "renamed", "s3", "s4", "s5"]
        assert session_list.virtual_size.height == 5 * 2  # two lines a session
        session_list.upsert(Session(name="new", workspace="/tmp"))
        assert session_list.virtual_size.height == 6 * 2
        session_list.remove_session(sessions[0].id)
        assert session_list.sessions[0].name == "renamed"
        line = session_list.render_line(2).text  # "s3", now number 2, in front
        assert line.startswith("  2 ●   s3") and line.rstrip().endswith("3m ago")


def test_a_routed_request_shows_its_route() -> None:
    from backend.messages import Message, MessageType
    from widgets.transcript.blocks import route_line

    routed = Message[dict[str, object]](
        session_id="s",
        source="user",
        type=MessageType.USER_INPUT,
        payload={
            "text": "where is the auth middleware?",
            "route": {
                "target": "librarian", "tier": "pattern", "intent": "LOCATE",
                "subject": "auth_middleware", "time_scope": None, "confidence": 0.82,
            },
        },
    )  # fmt: skip
    assert route_line(routed) == "→ librarian · pattern · LOCATE auth_middleware · 0.82"
    command = routed.model_copy(
        update={"payload": {"text": "/status", "route": {"target": "guide", "tier": "dsl"}}}
    )
    assert route_line(command) == "→ guide · dsl"
    assert route_line(routed.model_copy(update={"payload": {"text": "old line"}})) is None


def test_a_finished_draft_stays_until_the_recorded_answer_replaces_it() -> None:
    from datetime import UTC, datetime

    from backend.messages import Message, MessageType
    from screens.state.answer_drafts import AnswerDrafts

    drafts = AnswerDrafts(lambda: datetime(2026, 1, 1, tzinfo=UTC))
    drafts.step("s", "architect", "text_delta", "Half")
    assert drafts.working("s") == "architect"
    drafts.step("s", "architect", "final", "")
    assert drafts.working("s") is None  # no longer answering...
    shown = drafts.message("s")
    assert shown is not None and shown.payload["text"] == "Half"  # ...but still on screen
    question = Message[dict[str, object]](
        session_id="s", source="user", type=MessageType.USER_INPUT, payload={"text": "q"}
    )
    assert not drafts.answered(question)
    reply = question.model_copy(update={"type": MessageType.AGENT_REPLY, "source": "architect"})
    assert drafts.answered(reply) and drafts.message("s") is None
