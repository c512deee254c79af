"""Session-private context is never visible to another session."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.sessions.manager import SessionManager
from backend.sessions.models import FileRecord, SessionContext


def _two() -> tuple[SessionManager, str, str]:
    manager = SessionManager()
    a = manager.create("a", workspace="/w").id
    b = manager.create("b", workspace="/w").id
    return manager, a, b


def test_context_updates_stay_in_their_session() -> None:
    manager, a, b = _two()

    def work(ctx: SessionContext) -> None:
        ctx.current_task = "refactor parser"
        ctx.blockers.append("flaky test")
        ctx.modified_files["src/parser.py"] = FileRecord(path="src/parser.py")

    manager.update_context(a, work)
    assert manager.get_context(a).current_task == "refactor parser"
    other = manager.get_context(b)
    assert other == SessionContext()
    assert "src/parser.py" not in other.modified_files


def test_returned_contexts_are_copies() -> None:
    manager, a, b = _two()
    ctx = manager.get_context(a)
    ctx.blockers.append("leak?")
    assert manager.get_context(a).blockers == []
    session = manager.get(a)
    session.context.next_steps.append("leak?")
    assert manager.get_context(a).next_steps == []
    assert manager.get_context(b).next_steps == []


def test_default_containers_are_not_shared_between_sessions() -> None:
    manager, a, b = _two()
    manager.update_context(a, lambda c: c.completed_steps.append("one"))
    assert manager.get_context(b).completed_steps == []
    assert manager.get(a).context.completed_steps is not manager.get(b).context.completed_steps


def test_an_invalid_update_changes_nothing() -> None:
    manager, a, _ = _two()
    manager.update_context(a, lambda c: c.next_steps.append("keep me"))

    def bad(ctx: SessionContext) -> None:
        ctx.next_steps.append(123)  # type: ignore[arg-type]

    with pytest.raises(ValidationError):
        manager.update_context(a, bad)
    assert manager.get_context(a).next_steps == ["keep me"]


def test_a_failing_update_changes_nothing() -> None:
    manager, a, _ = _two()

    def boom(ctx: SessionContext) -> None:
        ctx.current_task = "half done"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        manager.update_context(a, boom)
    assert manager.get_context(a).current_task is None
