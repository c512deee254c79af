"""The history window's start stays put between turns, so the prompt cache keeps hitting.

A window that slid by one message a turn would change the first message of every
request once a conversation is long, and a provider's prefix cache would miss all
of it after the tools and the system prompt.
"""

from __future__ import annotations

from typing import Any

import pytest

from backend.agents.conversation import HistoryWindow, conversation
from backend.messages import Message, MessageType

Transcript = list[Message[dict[str, Any]]]


def say(n: int) -> Message[dict[str, Any]]:
    kind = MessageType.USER_INPUT if n % 2 == 0 else MessageType.AGENT_REPLY
    text = {"text": f"line {n}"}
    return Message(id=f"m{n}", session_id="s", source="user", type=kind, payload=text)


def latest(transcript: Transcript, limit: int) -> Transcript:
    return transcript[-limit:]  # what the archive hands back: the last `limit` messages


def test_a_short_conversation_is_shown_whole_and_keeps_its_start() -> None:
    window = HistoryWindow(limit=10, step=4)
    transcript = [say(n) for n in range(3)]
    assert [m.id for m in window.cut("s", transcript)] == ["m0", "m1", "m2"]
    transcript += [say(3), say(4)]
    assert window.cut("s", latest(transcript, 10))[0].id == "m0"


def test_the_start_moves_in_steps_not_with_every_turn() -> None:
    window = HistoryWindow(limit=10, step=4)
    transcript: Transcript = []
    starts: list[str] = []
    for turn in range(12):  # two messages a turn: a request and its answer
        shown = window.cut("s", latest(transcript, 10))
        starts.append(shown[0].id if shown else "-")
        assert len(shown) <= 10
        transcript += [say(2 * turn), say(2 * turn + 1)]
    # The start jumps only when the window would pass 10 messages, to leave 6.
    assert starts == ["-", "m0", "m0", "m0", "m0", "m0", "m6", "m6", "m6", "m12", "m12", "m12"]


def test_after_a_restart_a_long_conversation_anchors_on_its_latest_messages() -> None:
    transcript = [say(n) for n in range(30)]
    shown = HistoryWindow(limit=10, step=4).cut("s", latest(transcript, 10))
    assert [m.id for m in shown] == [f"m{n}" for n in range(24, 30)]


def test_sessions_keep_their_own_anchor() -> None:
    window = HistoryWindow(limit=10, step=4)
    mine = [say(n) for n in range(4)]
    theirs = [say(n).model_copy(update={"id": f"t{n}"}) for n in range(4)]
    assert window.cut("a", mine)[0].id == "m0"
    assert window.cut("b", theirs)[0].id == "t0"
    assert window.cut("a", [*mine, say(4)])[0].id == "m0"


def test_the_window_feeds_the_conversation_in_order() -> None:
    transcript = [say(n) for n in range(4)]
    messages = conversation(HistoryWindow().cut("s", transcript), "now")
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[-1].text == "now"


@pytest.mark.parametrize("step", [0, 10, 11])
def test_a_step_outside_the_limit_is_refused(step: int) -> None:
    with pytest.raises(ValueError, match="history step"):
        HistoryWindow(limit=10, step=step)
