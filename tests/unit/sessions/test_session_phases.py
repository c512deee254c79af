"""The session's phase: the seed's moves and nothing else, each for a reason."""

from __future__ import annotations

from collections import deque

import pytest

from backend.errors import ErrorKind
from backend.sessions.manager import SessionChange, SessionManager
from backend.sessions.phases import (
    PHASE_TRANSITIONS,
    REASON_MAX,
    PhaseApprovalRequiredError,
    PhaseRequestError,
    PhaseTransitionError,
    SessionPhase,
    next_phases,
    parse_phase,
)

P = SessionPhase


def _route(target: SessionPhase) -> list[SessionPhase]:
    """The shortest run of legal moves from idle to ``target``."""
    seen = {P.IDLE: [P.IDLE]}
    queue = deque([P.IDLE])
    while queue:
        here = queue.popleft()
        for there in next_phases(here):
            if there not in seen:
                seen[there] = [*seen[here], there]
                queue.append(there)
    return seen[target][1:]


def _manager_in(phase: SessionPhase) -> tuple[SessionManager, str]:
    manager = SessionManager()
    sid = manager.create("subject", workspace="/w").id
    manager.activate(sid)
    for step in _route(phase):
        manager.set_phase(sid, step, f"on to {step.value}", approval="plan-1")
    assert manager.get(sid).phase is phase
    return manager, sid


def test_the_table_is_the_seeds_flow() -> None:
    assert {k: set(v) for k, v in PHASE_TRANSITIONS.items()} == {
        P.IDLE: {P.RESEARCH, P.PLANNING},
        P.RESEARCH: {P.PLANNING, P.IDLE},
        P.PLANNING: {P.EXECUTION, P.IDLE},
        P.EXECUTION: {P.INSPECTION, P.PLANNING},
        P.INSPECTION: {P.TESTING, P.EXECUTION, P.PLANNING},
        P.TESTING: {P.COMPLETE, P.EXECUTION, P.PLANNING},
        P.COMPLETE: {P.PLANNING, P.RESEARCH},
    }
    # A change request reaches planning from every phase but planning itself.
    assert all(P.PLANNING in v for k, v in PHASE_TRANSITIONS.items() if k is not P.PLANNING)
    # Every phase can be reached, and complete only through execution, inspection, testing.
    assert _route(P.COMPLETE) == [P.PLANNING, P.EXECUTION, P.INSPECTION, P.TESTING, P.COMPLETE]


def test_a_new_session_has_no_planned_work() -> None:
    manager = SessionManager()
    assert manager.create("fresh", workspace="/w").phase is P.IDLE


@pytest.mark.parametrize("current", list(SessionPhase))
@pytest.mark.parametrize("target", list(SessionPhase))
def test_only_the_tables_moves_are_legal(current: SessionPhase, target: SessionPhase) -> None:
    manager, sid = _manager_in(current)
    seen: list[SessionChange] = []
    manager.add_listener(seen.append)
    if target is current:  # asking for the phase it is in changes nothing
        assert manager.set_phase(sid, target, "again").phase is current
        assert seen == []
    elif target in PHASE_TRANSITIONS[current]:
        moved = manager.set_phase(sid, target, "the next step", approval="plan-7")
        assert moved.phase is target
        [change] = seen
        assert change.operation == "phase" and change.phase is not None
        assert (change.phase.old, change.phase.new) == (current, target)
        assert change.phase.reason == "the next step"
        assert change.phase.approval == ("plan-7")
    else:
        with pytest.raises(PhaseTransitionError) as info:
            manager.set_phase(sid, target, "jump", approval="plan-7")
        error = info.value
        assert error.error_kind is ErrorKind.CONFLICT
        assert (error.current, error.target) == (current, target)
        assert error.allowed == next_phases(current)
        text = str(error)
        assert f"from {current.value} to {target.value}" in text
        assert all(p.value in text for p in next_phases(current)), "names the next phases"
        assert manager.get(sid).phase is current and seen == [], "a refusal changes nothing"


@pytest.mark.parametrize("source", [P.PLANNING, P.INSPECTION, P.TESTING])
def test_execution_needs_a_named_approval(source: SessionPhase) -> None:
    manager, sid = _manager_in(source)
    for missing in (None, "", " \n "):
        with pytest.raises(PhaseApprovalRequiredError) as info:
            manager.set_phase(sid, P.EXECUTION, "go", approval=missing)
        assert info.value.error_kind is ErrorKind.CONFLICT
        assert "approval" in str(info.value)
    assert manager.get(sid).phase is source
    assert manager.set_phase(sid, P.EXECUTION, "go", approval="q-123").phase is P.EXECUTION


def test_a_reason_is_required_and_kept_to_one_short_line() -> None:
    manager, sid = _manager_in(P.IDLE)
    for empty in ("", "   ", "\n\t\x1b"):
        with pytest.raises(PhaseRequestError) as info:
            manager.set_phase(sid, P.PLANNING, empty)
        assert info.value.error_kind is ErrorKind.INVALID
    seen: list[SessionChange] = []
    manager.add_listener(seen.append)
    hostile = "add a flag\n\x1b]52;c;ZXZpbA==\x07 now\u2028" + "x" * 1000
    manager.set_phase(sid, P.PLANNING, hostile)
    [change] = seen
    assert change.phase is not None
    reason = change.phase.reason
    assert reason.startswith("add a flag ]52;c;ZXZpbA== now")
    assert len(reason) == REASON_MAX and reason.endswith("…")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in reason)


def test_unknown_phases_are_named_with_the_real_ones() -> None:
    assert parse_phase(" Planning ") is P.PLANNING
    assert parse_phase(P.TESTING) is P.TESTING
    with pytest.raises(PhaseRequestError) as info:
        parse_phase("deploying")
    assert info.value.error_kind is ErrorKind.INVALID
    assert "deploying" in str(info.value)
    assert all(p.value in str(info.value) for p in SessionPhase)


def test_a_finished_or_closed_sessions_phase_is_final() -> None:
    manager, sid = _manager_in(P.TESTING)
    manager.complete(sid)
    with pytest.raises(PhaseTransitionError) as info:
        manager.set_phase(sid, P.COMPLETE, "tests passed")
    assert "completed" in str(info.value) and info.value.allowed == []
    other = manager.create("other", workspace="/w").id
    manager.close(other)
    with pytest.raises(PhaseTransitionError, match="closed"):
        manager.set_phase(other, P.PLANNING, "a change")


def test_a_suspended_sessions_work_moves_on() -> None:
    """A plan may finish in the background while the user works elsewhere."""
    manager, sid = _manager_in(P.EXECUTION)
    manager.suspend(sid)
    assert manager.set_phase(sid, P.INSPECTION, "the DAG finished").phase is P.INSPECTION


def test_restore_brings_the_snapshots_phase_back_as_a_move_of_its_own() -> None:
    manager, sid = _manager_in(P.PLANNING)
    snap = manager.snapshot(sid)
    assert snap.session.phase is P.PLANNING
    manager.set_phase(sid, P.EXECUTION, "approved", approval="q-1")
    manager.set_phase(sid, P.INSPECTION, "done")
    seen: list[SessionChange] = []
    manager.add_listener(seen.append)
    restored = manager.restore(snap)
    assert restored.phase is P.PLANNING
    [change] = seen
    assert change.operation == "restore" and change.phase is not None
    assert (change.phase.old, change.phase.new) == (P.INSPECTION, P.PLANNING)
    assert snap.id[:8] in change.phase.reason
    # Restoring the phase it is already in records no move.
    seen.clear()
    manager.restore(snap)
    assert seen[0].phase is None


def test_a_session_unknown_here_comes_back_in_its_phase() -> None:
    manager, sid = _manager_in(P.TESTING)
    snap = manager.snapshot(sid)
    fresh = SessionManager()
    assert fresh.restore(snap).phase is P.TESTING


def test_a_manager_built_from_stored_sessions_keeps_their_phases() -> None:
    manager, sid = _manager_in(P.INSPECTION)
    again = SessionManager(manager.list_all())
    assert again.get(sid).phase is P.INSPECTION


def test_the_phase_event_travels_as_json_and_back() -> None:
    """``sylk run --json`` prints it and an export keeps it: it must round-trip."""
    from backend.events import EVENT_ADAPTER, SessionPhaseChanged, event_to_json

    manager, sid = _manager_in(P.PLANNING)
    event = SessionPhaseChanged(
        session_id=sid,
        session=manager.get(sid),
        old_phase=P.IDLE,
        phase=P.PLANNING,
        reason="a change request",
    )
    again = EVENT_ADAPTER.validate_json(event_to_json(event))
    assert again == event and again.kind == "session.phase"
