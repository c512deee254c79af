"""The UI's state without an app: the store, the switch queue and the event table."""

from __future__ import annotations

import asyncio
import typing
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.dom import DOMNode

from backend.events import (
    ActiveSessionChanged,
    AgentStep,
    AgentStepEvent,
    EngineEvent,
    IndexProgress,
    QuestionSettled,
)
from backend.messages import Message, MessageType
from backend.sessions.models import Session, SessionState
from screens.state.store import UiState
from sylk_tui.engine_link.event_table import EVENT_MESSAGES
from sylk_tui.engine_link.messages import (
    AgentStepped,
    ForegroundChanged,
    IndexChanged,
    QuestionClosed,
    engine_message,
)
from sylk_tui.engine_link.switch_queue import SwitchQueue

NOW = datetime(2026, 3, 14, 15, 0, tzinfo=UTC)


def _state(**kwargs: Any) -> UiState:
    # Signals need an owner; one that is not in a running app publishes to nobody.
    return UiState(DOMNode(), clock=lambda: NOW, **kwargs)


def _session(n: int, state: SessionState = SessionState.SUSPENDED) -> Session:
    return Session(
        id=f"{n:02d}" + "b" * 30,
        name=f"s{n}",
        state=state,
        workspace="/w",
        created_at=NOW,
        last_active_at=NOW,
    )


def _message(session_id: str, n: int, kind: MessageType = MessageType.AGENT_REPLY) -> Any:
    return Message[dict[str, Any]](
        id=f"m{n}",
        session_id=session_id,
        source="user" if kind is MessageType.USER_INPUT else "architect",
        type=kind,
        payload={"text": f"line {n}"},
        timestamp=NOW + timedelta(seconds=n),
    )


def test_load_lists_open_sessions_and_picks_the_one_to_show() -> None:
    state = _state()
    one, two = _session(1), _session(2, SessionState.ACTIVE)
    closed = _session(3).model_copy(update={"closed_at": NOW})
    assert state.load([one, two, closed], two.id) == two.id
    assert list(state.sessions) == [one.id, two.id]
    assert state.foreground_id == two.id
    assert state.number(two.id) == 2 and state.session_at(1) == one.id
    assert state.session_at(3) is None
    # With nothing in front, the first session is shown.
    assert _state().load([one, two], None) == one.id


def test_stepping_wraps_around_from_the_session_viewed() -> None:
    state = _state()
    ids = [s.id for s in (_session(1), _session(2), _session(3))]
    state.load([_session(1), _session(2), _session(3)], None)
    # Nothing viewed yet: either way starts at the top.
    assert state.step_from_viewed(1) == state.step_from_viewed(-1) == ids[0]
    state.view(ids[2])
    assert state.step_from_viewed(1) == ids[0]
    assert state.step_from_viewed(-1) == ids[1]


def test_a_view_is_shown_from_memory_once_read() -> None:
    state = _state()
    a, b = _session(1).id, _session(2).id
    state.load([_session(1), _session(2)], a)
    assert not state.view(a)  # not read yet
    assert state.begin_read(a)
    assert not state.begin_read(a)  # one read at a time
    state.append(_message(a, 1))  # committed while the read runs: kept
    assert state.loaded(a, [_message(a, 0)])
    assert state.shown_id == a
    assert state.read_ahead(a) == [b]
    assert not state.view(b)
    state.show_loading(b)
    assert state.shown_id == b  # "Loading…" replaced the previous transcript
    assert state.view(a)  # back: from memory, at once
    assert state.loaded(b, []) is False  # b is no longer wanted on screen
    assert state.shown_id == a


def test_a_long_read_shows_loading_only_while_it_is_still_wanted() -> None:
    state = _state()
    a, b = _session(1).id, _session(2).id
    state.load([_session(1), _session(2)], a)
    state.view(a)
    state.view(b)
    state.show_loading(a)  # the user moved on to b
    assert state.shown_id is None
    state.begin_read(b)
    assert state.loaded(b, None) is False  # the read failed
    assert state.shown_id == b  # "Not readable." is shown for it


def test_the_pending_line_settles_when_recorded_or_refused() -> None:
    state = _state()
    a = _session(1).id
    assert state.begin_line(a, "hello")
    assert not state.begin_line(a, "again")  # one line at a time
    state.append(_message(a, 1, MessageType.USER_INPUT))
    assert state.pending_line is None
    assert state.begin_line(a, "refused")
    state.settle_line(a, "other text", accepted=False)  # not this line
    assert state.pending_line == (a, "refused")
    state.settle_line(a, "refused", accepted=False)
    assert state.pending_line is None
    assert not state.begin_line(a, "   ")


def test_drafts_and_index_status() -> None:
    state = _state()
    session = _session(1, SessionState.ACTIVE)
    state.load([session], session.id)
    state.step(session.id, "architect", "text_delta", "The fix")
    assert state.drafts.working(session.id) == "architect"
    state.step(session.id, "architect", "final", "")
    assert state.drafts.working(session.id) is None
    state.set_index("/w", "12 files indexed")
    assert state.index_text(session) == "12 files indexed"
    assert state.index_text(None) is None


async def test_the_switch_queue_carries_out_only_the_latest_request() -> None:
    front: list[str] = ["s0"]
    switched: list[str] = []
    steering_seen: list[bool] = []
    release = asyncio.Event()
    queue: SwitchQueue

    async def switch(session_id: str) -> None:
        steering_seen.append(queue.steering)
        if not switched:
            await release.wait()  # the first switch is slow; the user keeps pressing
        switched.append(session_id)
        front[0] = session_id

    queue = SwitchQueue(switch, lambda: front[0], asyncio.Lock())
    assert queue.want("s1")
    drain = asyncio.create_task(queue.drain())
    await asyncio.sleep(0)
    for target in ("s2", "s3", "s4"):
        assert not queue.want(target)  # a drain already runs
    release.set()
    await drain
    assert switched == ["s1", "s4"]
    assert steering_seen == [True, True] and not queue.steering and not queue.draining
    assert not queue.want("s4")  # already in front: nothing to do


async def test_a_forgotten_request_is_not_carried_out() -> None:
    lock = asyncio.Lock()
    switched: list[str] = []

    async def switch(session_id: str) -> None:
        switched.append(session_id)

    queue = SwitchQueue(switch, lambda: None, lock)
    async with lock:  # another engine call runs
        assert queue.want("s1")
        drain = asyncio.create_task(queue.drain())
        await asyncio.sleep(0)
        queue.forget()  # e.g. the user resumed the session on screen instead
    await drain
    assert switched == []


def test_every_engine_event_kind_has_an_entry_in_the_table() -> None:
    union = typing.get_args(typing.get_args(EngineEvent)[0])
    kinds = {cls.model_fields["kind"].default for cls in union}
    assert kinds == set(EVENT_MESSAGES)


def test_events_become_messages_by_kind() -> None:
    moved = ActiveSessionChanged(session_id="b", previous_id="a")
    followed = engine_message(moved)
    assert isinstance(followed, ForegroundChanged) and followed.follow
    by_hand = engine_message(moved, by_hand=True)
    assert isinstance(by_hand, ForegroundChanged) and not by_hand.follow
    step = AgentStep(
        turn_id="t", session_id="a", role="architect", step=1, kind="text_delta", data={"text": "x"}
    )
    stepped = engine_message(AgentStepEvent(session_id="a", step=step))
    assert isinstance(stepped, AgentStepped) and stepped.text == "x"
    index = engine_message(IndexProgress(workspace="/w", phase="building", done=3, total=10))
    assert isinstance(index, IndexChanged) and index.text == "indexing 3/10 files"
    closed = engine_message(QuestionSettled(question_id="q", withdrawn=True))
    assert isinstance(closed, QuestionClosed) and closed.withdrawn


@pytest.mark.parametrize(
    ("phase", "text"),
    [
        ("building", "indexing…"),
        ("rebuilding", "re-indexing…"),
        ("ready", "0 files indexed"),
        ("updated", "index updated (0 changed)"),
    ],
)
def test_index_status_texts(phase: str, text: str) -> None:
    message = engine_message(IndexProgress(workspace="/w", phase=phase))
    assert isinstance(message, IndexChanged) and message.text == text
