"""The approval gate through the real gateway, with a real QuestionBoard answered by a
test front end: what asks, what runs, what is refused and how the model hears of it."""

from __future__ import annotations

from pathlib import Path

from backend.engine import Engine
from backend.engine.build import EngineParts
from backend.skills.envelopes import Envelope
from tests.integration.approvals.conftest import FrontEnd, context

SHELL = "engineer.shell.run"


async def _run(parts: EngineParts, sid: str, ws: Path, command: str, **kw: object) -> Envelope:
    args = {"command": command}
    return await parts.gateway.execute(context(sid, ws), SHELL, args, dry_run=False, **kw)  # type: ignore[arg-type]


async def test_with_nobody_to_ask_a_command_is_refused_with_the_way_out(
    engine: Engine, engine_parts: EngineParts, workspace: Path
) -> None:
    session = await engine.create_session("s")
    out = await _run(engine_parts, session.id, workspace, "touch made")  # dry_run=false
    assert not out.ok and out.error is not None
    assert out.error.code == "ACCESS_DENIED"
    assert out.error.details["reason"] == "approval_required"
    assert "--approval auto-edit|auto" in out.error.message and "--yes" in out.error.message
    assert out.meta.approval == {"decision": "denied", "by": "policy",
                                 "reason": "approval_required", "mode": "ask"}  # fmt: skip
    assert not (workspace / "made").exists()


async def test_a_dry_run_never_asks(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    ctx = context(session.id, workspace)
    out = await engine_parts.gateway.execute(ctx, SHELL, {"command": "touch made"})
    assert out.ok and out.result["dry_run"] is True and front_end.asked == []
    assert out.meta.approval is None


async def test_allow_once_runs_and_asks_again_next_time(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    out = await _run(engine_parts, session.id, workspace, "touch made")
    assert out.ok, out.error
    assert (workspace / "made").exists()
    assert out.meta.approval is not None
    assert out.meta.approval["by"] == "user" and out.meta.approval["decision"] == "allowed"
    (asked,) = front_end.asked
    assert (asked.op, asked.agent, asked.action, asked.command) == (
        SHELL,
        "engineer",
        "command",
        "touch made",
    )
    assert asked.sandbox == engine_parts.approvals.gate.sandbox_words()
    assert asked.session_rules == ("touch *", "touch made")
    await _run(engine_parts, session.id, workspace, "touch made")
    assert len(front_end.asked) == 2


async def test_allow_for_the_session_keeps_the_prefix_rule(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    front_end.answer = lambda request: f"allow-session:{request.session_rules[0]}"
    assert (await _run(engine_parts, session.id, workspace, "touch a")).ok
    again = await _run(engine_parts, session.id, workspace, "touch b")
    assert again.ok and len(front_end.asked) == 1
    assert again.meta.approval is not None and again.meta.approval["by"] == "session"
    # The rule covers one simple command only: a compound one asks again.
    front_end.answer = lambda _request: "deny"
    chained = await _run(engine_parts, session.id, workspace, "touch c; touch d")
    assert not chained.ok and len(front_end.asked) == 2
    assert not (workspace / "c").exists() and not (workspace / "d").exists()


async def test_deny_with_a_reason_goes_back_to_the_model(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    front_end.answer = lambda _request: "deny:use the Makefile target instead"
    out = await _run(engine_parts, session.id, workspace, "touch made")
    assert not out.ok and out.error is not None
    assert out.error.details["reason"] == "denied_by_user"
    assert "use the Makefile target instead" in out.error.message
    assert out.error.details["user_reason"] == "use the Makefile target instead"
    front_end.answer = lambda _request: None  # Esc
    out = await _run(engine_parts, session.id, workspace, "touch made")
    assert not out.ok and out.error is not None and out.error.details["by"] == "user"
    assert not (workspace / "made").exists()


async def test_an_edit_shows_its_diff_and_allow_for_session_covers_the_file(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    ctx = context(session.id, workspace)
    front_end.answer = lambda request: f"allow-session:{request.path}"
    out = await engine_parts.gateway.execute(
        ctx, "engineer.file.write", {"path": "notes.txt", "content": "one\ntwo\n"}
    )
    assert out.ok, out.error
    (asked,) = front_end.asked
    assert asked.action == "edit" and asked.path == "notes.txt"
    assert "--- /dev/null" in asked.diff and "+one" in asked.diff
    read = await engine_parts.gateway.execute(ctx, "engineer.file.read", {"path": "notes.txt"})
    assert read.ok
    edit = {"path": "notes.txt", "old_content": "two", "new_content": "three"}
    out = await engine_parts.gateway.execute(ctx, "engineer.file.edit", edit, dry_run=False)
    assert out.ok and len(front_end.asked) == 1  # the file was allowed for the session
    assert (workspace / "notes.txt").read_text() == "one\nthree\n"


async def test_an_edit_question_carries_the_real_diff(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    (workspace / "app.py").write_text("x = 1\ny = 2\n")
    session = await engine.create_session("s")
    ctx = context(session.id, workspace)
    assert (await engine_parts.gateway.execute(ctx, "engineer.file.read", {"path": "app.py"})).ok
    front_end.answer = lambda _request: "deny"
    edit = {"path": "app.py", "old_content": "y = 2", "new_content": "y = 3"}
    out = await engine_parts.gateway.execute(ctx, "engineer.file.edit", edit, dry_run=False)
    assert not out.ok
    (asked,) = front_end.asked
    assert "-y = 2" in asked.diff and "+y = 3" in asked.diff and "a/app.py" in asked.diff
    assert (workspace / "app.py").read_text() == "x = 1\ny = 2\n"
    # An edit that would fail anyway fails as it would, without a question.
    bad = {"path": "app.py", "old_content": "nowhere", "new_content": "z"}
    out = await engine_parts.gateway.execute(ctx, "engineer.file.edit", bad, dry_run=False)
    assert not out.ok and out.error is not None and out.error.code == "VALIDATION_ERROR"
    assert len(front_end.asked) == 1


async def test_batch_calls_are_gated_too(
    engine: Engine, engine_parts: EngineParts, workspace: Path, front_end: FrontEnd
) -> None:
    session = await engine.create_session("s")
    front_end.answer = lambda request: "allow" if request.command == "touch yes" else "deny"
    calls = [
        {"verb": "execute", "op": SHELL, "args": {"command": "touch yes"}, "dry_run": False},
        {"verb": "execute", "op": SHELL, "args": {"command": "touch no"}, "dry_run": False},
    ]
    out = await engine_parts.gateway.batch(context(session.id, workspace), calls)
    assert out.ok
    assert len(front_end.asked) == 2
    assert (workspace / "yes").exists() and not (workspace / "no").exists()
