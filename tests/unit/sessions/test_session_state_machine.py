"""The seed's session lifecycle and nothing else."""

from __future__ import annotations

import pytest

from backend.errors import AmbiguousSessionError, InvalidTransitionError, SessionNotFoundError
from backend.sessions.manager import SessionChange, SessionManager
from backend.sessions.models import TRANSITIONS, Session, SessionState

OPERATIONS = ["activate", "suspend", "resume", "complete", "fail"]
S = SessionState


def _manager_with(state: SessionState) -> tuple[SessionManager, str]:
    """A manager holding one session brought to ``state`` by legal moves."""
    manager = SessionManager()
    sid = manager.create("subject", workspace="/w").id
    path = {
        S.CREATED: [],
        S.ACTIVE: ["activate"],
        S.SUSPENDED: ["activate", "suspend"],
        S.COMPLETED: ["activate", "complete"],
        S.FAILED: ["activate", "fail"],
    }[state]
    for op in path:
        _apply(manager, sid, op)
    assert manager.get(sid).state is state
    return manager, sid


def _apply(manager: SessionManager, sid: str, op: str) -> None:
    if op == "fail":
        manager.fail(sid, "broken")
    else:
        getattr(manager, op)(sid)


@pytest.mark.parametrize("state", list(SessionState))
@pytest.mark.parametrize("op", OPERATIONS)
def test_only_the_seeds_transitions_are_legal(state: SessionState, op: str) -> None:
    manager, sid = _manager_with(state)
    expected = TRANSITIONS.get((state, op))
    if expected is None:
        with pytest.raises(InvalidTransitionError) as info:
            _apply(manager, sid, op)
        assert info.value.current == state.value
        assert state.value in str(info.value)
        assert manager.get(sid).state is state, "a refused operation changes nothing"
    else:
        _apply(manager, sid, op)
        assert manager.get(sid).state is expected


def test_transition_table_is_the_seeds() -> None:
    """The seed's table, and one addition: a background session's work can fail too."""
    assert set(TRANSITIONS.items()) == {
        ((S.SUSPENDED, "fail"), S.FAILED),
        ((S.CREATED, "activate"), S.ACTIVE),
        ((S.ACTIVE, "suspend"), S.SUSPENDED),
        ((S.ACTIVE, "complete"), S.COMPLETED),
        ((S.ACTIVE, "fail"), S.FAILED),
        ((S.SUSPENDED, "resume"), S.ACTIVE),
        ((S.SUSPENDED, "complete"), S.COMPLETED),
    }


def test_error_names_current_state_and_what_is_allowed() -> None:
    manager, sid = _manager_with(S.SUSPENDED)
    with pytest.raises(InvalidTransitionError) as info:
        manager.suspend(sid)
    text = str(info.value)
    assert "suspended" in text and "resume" in text and "complete" in text


def test_timestamps_follow_transitions() -> None:
    manager, sid = _manager_with(S.CREATED)
    assert manager.get(sid).activated_at is None
    manager.activate(sid)
    manager.suspend(sid)
    manager.complete(sid, "done")
    session = manager.get(sid)
    assert session.activated_at and session.suspended_at and session.completed_at
    assert session.activated_at <= session.suspended_at <= session.completed_at
    assert session.metadata["summary"] == "done"


def test_switch_suspends_the_active_session_and_activates_the_target() -> None:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    b = manager.create("b", workspace="/w").id
    manager.switch(a)
    assert manager.active_id == a
    manager.switch(b)
    assert manager.get(a).state is S.SUSPENDED
    assert manager.get(b).state is S.ACTIVE
    assert manager.active_id == b
    manager.switch(a)  # suspended -> resumed
    assert (manager.get(a).state, manager.get(b).state) == (S.ACTIVE, S.SUSPENDED)
    assert len(manager.by_state(S.ACTIVE)) == 1


def test_switch_to_a_finished_session_is_refused_and_keeps_the_foreground() -> None:
    manager = SessionManager()
    done = manager.create("done", workspace="/w").id
    manager.activate(done)
    manager.complete(done)
    live = manager.create("live", workspace="/w").id
    manager.activate(live)
    with pytest.raises(InvalidTransitionError) as info:
        manager.switch(done)
    assert info.value.current == "completed"
    assert manager.active_id == live
    assert manager.get(live).state is S.ACTIVE


def test_switch_to_the_active_session_is_a_no_op() -> None:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    manager.activate(a)
    seen: list[SessionChange] = []
    manager.add_listener(seen.append)
    manager.switch(a)
    assert seen == []


def test_close_hides_a_session_and_refuses_an_active_one() -> None:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    manager.activate(a)
    with pytest.raises(InvalidTransitionError):
        manager.close(a)
    manager.suspend(a)
    manager.close(a)
    assert manager.list_all() == []
    assert [s.id for s in manager.list_all(include_closed=True)] == [a]
    with pytest.raises(InvalidTransitionError) as info:
        manager.resume(a)
    assert info.value.current == "closed"


def test_listeners_see_every_change_with_the_old_state() -> None:
    manager = SessionManager()
    seen: list[SessionChange] = []
    manager.add_listener(seen.append)
    a = manager.create("a", workspace="/w").id
    manager.activate(a)
    manager.suspend(a)
    assert [(c.operation, c.old, c.session.state) for c in seen] == [
        ("create", None, S.CREATED),
        ("activate", S.CREATED, S.ACTIVE),
        ("suspend", S.ACTIVE, S.SUSPENDED),
    ]


def test_resolve_by_id_prefix_name_and_number() -> None:
    manager = SessionManager()
    a = manager.create("Alpha", workspace="/w")
    b = manager.create("beta", workspace="/w")
    assert manager.resolve(a.id).id == a.id
    assert manager.resolve(b.id[:6]).id == b.id
    assert manager.resolve("alpha").id == a.id  # names match case-insensitively
    assert manager.resolve("2").id == b.id
    with pytest.raises(SessionNotFoundError):
        manager.resolve("nope")
    with pytest.raises(SessionNotFoundError):
        manager.resolve("")


def test_resolve_reports_ambiguity() -> None:
    twins = [Session(id=f"abc{n}" + "0" * 29, name=f"s{n}", workspace="/w") for n in (1, 2)]
    manager = SessionManager(twins)
    with pytest.raises(AmbiguousSessionError) as info:
        manager.resolve("abc")
    assert info.value.matches == ["abc10000", "abc20000"]
    assert manager.resolve("abc2").name == "s2"


def test_loading_two_active_sessions_keeps_only_the_latest_in_front() -> None:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    manager.activate(a)
    old = manager.get(a)
    b = manager.create("b", workspace="/w").id
    manager.activate(b)  # suspends a
    stale = old.model_copy(update={"state": S.ACTIVE})
    reloaded = SessionManager([stale, manager.get(b)])
    assert reloaded.active_id == b
    assert reloaded.get(a).state is S.SUSPENDED


def test_snapshot_and_restore_bring_back_context() -> None:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    manager.activate(a)
    manager.update_context(a, lambda c: c.next_steps.append("write tests"))
    snap = manager.snapshot(a, transcript_count=3)
    manager.update_context(a, lambda c: c.next_steps.clear())
    restored = manager.restore(snap)
    assert restored.context.next_steps == ["write tests"]
    assert restored.state is S.ACTIVE  # state only moves through transitions
    fresh = SessionManager()
    again = fresh.restore(snap)
    assert again.id == a and again.state is S.SUSPENDED
    assert fresh.get(a).context.next_steps == ["write tests"]
