"""The approvals inbox with a real engine: questions from sessions in the background
(a command under the approval policy, a plan review) wait in the inbox, never as a
modal over the session on screen; the badge counts them; keys answer them, and the
gateway call goes on or is refused accordingly; answered elsewhere, they leave."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.skills.envelopes import Envelope
from backend.skills.models import SkillContext
from screens.approval import ApprovalScreen
from screens.approvals_inbox import ApprovalsInbox
from screens.choice import ChoiceScreen
from screens.main_screen import MainScreen
from sylk_tui.app import SylkApp
from tests.integration.plans.conftest import plan_doc
from tests.tui.support import settle, wait_for
from widgets.inbox_badge import InboxBadge

SIZE = (120, 40)
SHELL = "engineer.shell.run"


@pytest.fixture
def parts(data_dir: Path, workspace: Path) -> EngineParts:
    built = build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))
    built.approvals.gate.sandboxed = lambda: True  # commands ask under the policy on any machine
    return built


def _call(
    parts: EngineParts, session_id: str, agent: str, op: str, args: dict[str, Any]
) -> asyncio.Task[Envelope]:
    """An agent's gateway call in ``session_id``, running in the background."""
    ctx = SkillContext(session_id=session_id, agent=agent, workspace=parts.config.workspace,
                       scopes=frozenset({"shell"}), can_write=True)  # fmt: skip
    return asyncio.create_task(parts.gateway.execute(ctx, op, args, dry_run=False))


def _command(parts: EngineParts, session_id: str, command: str) -> asyncio.Task[Envelope]:
    return _call(parts, session_id, "engineer", SHELL, {"command": command})


def _plan(parts: EngineParts, session_id: str) -> asyncio.Task[Envelope]:
    return _call(parts, session_id, "architect", "architect.plan.create", {"plan": plan_doc()})


async def _background_session(pilot: Pilot[Any], parts: EngineParts, name: str) -> str:
    """A session that is not on screen (the one on screen stays where it is)."""
    await settle(pilot)
    session = await Engine.from_parts(parts).create_session(name, activate=False)
    await settle(pilot)
    return session.id


async def _waiting(pilot: Pilot[Any], count: int) -> None:
    app = pilot.app
    assert isinstance(app, SylkApp)
    await wait_for(pilot, lambda: len(app.state.pending) == count, f"{count} waiting")


def _badge(app: SylkApp) -> InboxBadge:
    return app.screen_stack[1].query_one(InboxBadge)


async def _open_inbox(pilot: Pilot[Any]) -> ApprovalsInbox:
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalsInbox), "the inbox")
    inbox = pilot.app.screen
    assert isinstance(inbox, ApprovalsInbox)
    return inbox


async def _done(pilot: Pilot[Any], call: asyncio.Task[Envelope]) -> Envelope:
    await wait_for(pilot, call.done, "the call to end")
    return call.result()


async def test_background_questions_wait_in_the_inbox_and_are_answered_there(
    parts: EngineParts, workspace: Path
) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        plans = await _background_session(pilot, parts, "plans")
        viewed = app.state.viewed_id
        assert viewed not in (builds, plans)
        command = _command(parts, builds, "touch made")
        await _waiting(pilot, 1)
        plan = _plan(parts, plans)
        await _waiting(pilot, 2)
        # Nothing covers the session on screen; the badge and the registry say what waits.
        assert isinstance(app.screen, MainScreen)
        assert _badge(app).count == 2 and "2 questions wait on you" in str(_badge(app).render())
        assert app.state.pending.waiting_sessions() == {builds, plans}
        inbox = await _open_inbox(pilot)
        first, second = app.state.pending.items()
        assert inbox.listed == [first.question_id, second.question_id]  # oldest first
        assert first.session_id == builds and second.session_id == plans
        rows = inbox.query_one("#inbox-list", OptionList)
        assert "builds" in str(rows.get_option_at_index(0).prompt)
        assert "touch made" in str(rows.get_option_at_index(0).prompt)
        await pilot.press("y")  # the command, once
        out = await _done(pilot, command)
        assert out.ok and out.meta.approval is not None and out.meta.approval["by"] == "user"
        assert (workspace / "made").exists()
        await wait_for(pilot, lambda: inbox.listed == [second.question_id], "the command left")
        assert _badge(app).count == 1
        await pilot.press("y")  # the plan: approved
        result = (await _done(pilot, plan)).result
        assert result["review"] == "approved"
        await wait_for(pilot, lambda: inbox.listed == [], "the plan left")
        assert _badge(app).count == 0 and not _badge(app).display
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_deny_with_a_reason_reaches_the_agent(parts: EngineParts, workspace: Path) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        command = _command(parts, builds, "touch nope")
        await _waiting(pilot, 1)
        inbox = await _open_inbox(pilot)
        await pilot.press("d")
        reason = inbox.query_one("#inbox-input", Input)
        assert reason.display and reason.has_focus
        await pilot.press(*"use make", "enter")  # typed letters never answer
        out = await _done(pilot, command)
    assert out.error is not None and out.error.details["user_reason"] == "use make"
    assert "use make" in out.error.message
    assert not (workspace / "nope").exists()


async def test_allow_for_the_session_stops_further_asks(
    parts: EngineParts, workspace: Path
) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        command = _command(parts, builds, "touch one")
        await _waiting(pilot, 1)
        await _open_inbox(pilot)
        await pilot.press("a")  # two rules offered: pick one in the approval's dialog
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the rules")
        chooser = app.screen.query_one("#approval-rules", OptionList)
        assert chooser.get_option_at_index(0).id == "touch *"
        await pilot.press("enter")
        assert (await _done(pilot, command)).ok
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalsInbox), "back")
        again = await _done(pilot, _command(parts, builds, "touch two"))
        assert again.ok and len(app.state.pending) == 0  # asked nothing
    assert (workspace / "one").exists() and (workspace / "two").exists()


async def test_n_denies_and_a_plan_takes_a_modification(parts: EngineParts) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        command = _command(parts, builds, "touch no")
        await _waiting(pilot, 1)
        plan = _plan(parts, builds)
        await _waiting(pilot, 2)
        inbox = await _open_inbox(pilot)
        await pilot.press("m")  # m is for plans: the command stays
        assert inbox.typing is None and len(app.state.pending) == 2
        await pilot.press("n")
        out = await _done(pilot, command)
        assert out.error is not None and out.error.details["reason"] == "denied_by_user"
        await wait_for(pilot, lambda: len(inbox.listed) == 1, "the command left")
        await pilot.press("m", *"split part 2", "enter")
        result = (await _done(pilot, plan)).result
    assert result["review"] == "modify" and result["feedback"] == "split part 2"


async def test_questions_answered_elsewhere_leave_the_inbox(parts: EngineParts) -> None:
    engine = Engine.from_parts(parts)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        answered = _command(parts, builds, "touch elsewhere")
        await _waiting(pilot, 1)
        stopped = _command(parts, builds, "touch stopped")
        await _waiting(pilot, 2)
        inbox = await _open_inbox(pilot)
        first, second = app.state.pending.items()
        assert engine.answer_question(first.question_id, "deny")  # another front end
        assert not (await _done(pilot, answered)).ok
        await wait_for(pilot, lambda: inbox.listed == [second.question_id], "it left")
        stopped.cancel()  # the turn that asked was stopped: the question is withdrawn
        await wait_for(pilot, lambda: inbox.listed == [], "withdrawn")
        assert _badge(app).count == 0
        assert isinstance(app.screen, ApprovalsInbox)


async def test_the_on_screen_sessions_question_still_opens_its_dialog(
    parts: EngineParts,
) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        viewed = app.state.viewed_id
        assert viewed is not None
        command = _command(parts, viewed, "touch here")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the modal")
        assert _badge(app).count == 1  # listed in the inbox as well
        await pilot.press("n")
        assert not (await _done(pilot, command)).ok
        await wait_for(pilot, lambda: len(app.state.pending) == 0, "it left")


async def test_the_palette_opens_the_inbox(parts: EngineParts) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"approvals inbox")
        await settle(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalsInbox), "the inbox")
        assert "Nothing waits on you." in str(app.screen.query_one("#inbox-empty").render())


async def test_a_clarification_is_answered_in_words_from_the_inbox(parts: EngineParts) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        builds = await _background_session(pilot, parts, "builds")
        asked = _call(parts, builds, "architect", "architect.user.clarify",
                      {"question": "Which database?", "options": []})  # fmt: skip
        await _waiting(pilot, 1)
        inbox = await _open_inbox(pilot)
        assert "question" in str(
            inbox.query_one("#inbox-list", OptionList).get_option_at_index(0).prompt
        )
        await pilot.press("enter")  # its own dialog: a question answered in words
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog")
        await pilot.press(*"postgres", "enter")
        result = (await _done(pilot, asked)).result
        await wait_for(pilot, lambda: inbox.listed == [], "it left")
    assert result["answered"] and result["answer"] == "postgres"


async def test_with_the_inbox_open_a_question_joins_it_instead_of_a_dialog(
    parts: EngineParts,
) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        viewed = app.state.viewed_id
        assert viewed is not None
        inbox = await _open_inbox(pilot)
        command = _command(parts, viewed, "touch seen")
        await wait_for(pilot, lambda: len(inbox.listed) == 1, "listed")
        assert app.screen is inbox  # no dialog over the inbox that already shows it
        await pilot.press("n")
        assert not (await _done(pilot, command)).ok
