"""The transcript cache's bounds: by sessions, and by the messages all tails hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from backend.messages import Message, MessageType
from screens.state.transcript_cache import TOTAL_MESSAGES, TranscriptCache

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


def _tail(session_id: str, count: int) -> list[Message[dict[str, Any]]]:
    return [
        Message[dict[str, Any]](
            id=f"{session_id}-m{n}",
            session_id=session_id,
            source="architect",
            type=MessageType.AGENT_REPLY,
            payload={"text": f"answer {n}"},
            timestamp=NOW + timedelta(minutes=n),
        )
        for n in range(count)
    ]


def test_the_tails_together_hold_no_more_than_the_total_least_recent_going_first() -> None:
    cache = TranscriptCache(sessions=24, messages=200, total=500)
    for n in range(6):
        cache.put(f"s{n}", _tail(f"s{n}", 200))
        assert cache.held <= 500
    assert [sid for sid in ("s0", "s1", "s2", "s3") if sid in cache] == []
    assert "s4" in cache and "s5" in cache and cache.held == 400
    cache.get("s4")  # shown again: now the most recent
    cache.put("s6", _tail("s6", 200))
    assert "s5" not in cache and "s4" in cache and "s6" in cache


def test_short_tails_let_more_sessions_stay_than_long_ones() -> None:
    cache = TranscriptCache(sessions=24, messages=200, total=500)
    for n in range(24):
        cache.put(f"s{n}", _tail(f"s{n}", 20))
    assert len(cache) == 24 and cache.held == 480


def test_messages_arriving_count_and_may_push_the_oldest_tail_out() -> None:
    cache = TranscriptCache(sessions=24, messages=200, total=300)
    cache.put("old", _tail("old", 150))
    cache.put("new", _tail("new", 150))
    cache.append(_tail("new", 151)[-1])  # a committed message of the session on screen
    assert "old" not in cache and cache.held == 151
    tail = cache.get("new")
    assert tail is not None and tail[-1].id == "new-m150"


def test_one_tail_longer_than_the_total_still_stays_and_the_default_is_bounded() -> None:
    cache = TranscriptCache(sessions=4, messages=200, total=50)
    cache.put("big", _tail("big", 200))
    assert "big" in cache and cache.held == 200
    assert TranscriptCache(sessions=24, messages=200).total == TOTAL_MESSAGES < 24 * 200
