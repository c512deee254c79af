"""The idle rule (which sessions to suspend), active time, and the stats text."""

from __future__ import annotations

from datetime import timedelta

from backend.sessions.idle import idle_sessions
from backend.sessions.models import Session, SessionConfig, SessionState
from backend.sessions.stats import SessionStats, active_seconds, stats_text
from tests.support.clocks import EPOCH

HOUR = timedelta(hours=1)


def session(name: str, state: SessionState, *, own: timedelta | None = None) -> Session:
    return Session(name=name, workspace="/w", state=state, last_active_at=EPOCH,
                   config=SessionConfig(auto_suspend_after=own))  # fmt: skip


def test_only_active_idle_unbusy_unshown_sessions_are_due() -> None:
    active = session("a", SessionState.ACTIVE)
    shown = session("shown", SessionState.ACTIVE)
    busy = session("busy", SessionState.ACTIVE)
    suspended = session("s", SessionState.SUSPENDED)
    created = session("c", SessionState.CREATED)
    everyone = [active, shown, busy, suspended, created]
    due = idle_sessions(everyone, EPOCH + HOUR, default=HOUR, busy=lambda sid: sid == busy.id,
                        shown=shown.id)  # fmt: skip
    assert due == [active.id]
    just_short = EPOCH + HOUR - timedelta(seconds=1)
    assert idle_sessions(everyone, just_short, default=HOUR, busy=lambda _: False) == []


def test_a_sessions_own_limit_wins_and_no_limit_means_never() -> None:
    quick = session("quick", SessionState.ACTIVE, own=timedelta(minutes=5))
    plain = session("plain", SessionState.ACTIVE)
    later = EPOCH + timedelta(minutes=5)
    assert idle_sessions([quick, plain], later, default=HOUR, busy=lambda _: False) == [quick.id]
    assert idle_sessions([plain], EPOCH + 100 * HOUR, default=None, busy=lambda _: False) == []


def test_active_time_caps_each_gap() -> None:
    moments = [EPOCH, EPOCH + timedelta(seconds=30), EPOCH + timedelta(hours=3)]
    assert active_seconds(moments, gap_s=300) == 330
    assert active_seconds([]) == 0 and active_seconds([EPOCH]) == 0


def test_the_stats_text_names_every_figure_and_a_failure() -> None:
    stats = SessionStats(session_id="abcdef123", name="w", state="failed", turns=3,
                         messages=9, input_tokens=100, output_tokens=20, cost_usd=0.5,
                         tool_calls=4, files_changed=2, dags={"passed": 1, "failed": 1},
                         active_s=3725, failure="disk gone")  # fmt: skip
    text = stats_text(stats)
    for part in ("turns        3", "120 (100 in, 20 out)", "$0.5000", "tool calls   4",
                 "2 changed", "1 failed, 1 passed", "1h02m", "disk gone"):  # fmt: skip
        assert part in text, part
    assert "not priced" in stats_text(SessionStats(session_id="x", name="n", state="active"))
