"""The plan review modal: a plan submitted through the gateway is shown (layers, tasks,
policy) and the keys answer it: y approves, m and w take typed text back to the
caller, Escape leaves it waiting: unanswered, in the approvals inbox and its badge, where
y approves it and the plan runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from backend.engine import Engine, EngineConfig
from backend.engine.build import EngineParts, build
from backend.skills.envelopes import Envelope
from backend.skills.models import SkillContext
from screens.approvals_inbox import ApprovalsInbox
from screens.main_screen import MainScreen
from screens.plans.plan_review import PlanReviewScreen
from sylk_tui.app import SylkApp
from tests.integration.plans.conftest import plan_doc
from tests.support.polling import until
from tests.tui.support import settle, wait_for
from widgets.inbox_badge import InboxBadge

SIZE = (120, 40)


@pytest.fixture
def parts(data_dir: Path, workspace: Path) -> EngineParts:
    return build(EngineConfig(data_dir=data_dir, workspace=workspace, watch_files=False))


async def _propose(pilot: Pilot[Any], parts: EngineParts) -> tuple[asyncio.Task[Envelope], str]:
    await settle(pilot)
    session = await Engine.from_parts(parts).ensure_session()
    ctx = SkillContext(session_id=session.id, agent="architect",
                       workspace=parts.config.workspace, can_write=True)  # fmt: skip
    args = {"plan": plan_doc()}
    call = asyncio.create_task(parts.gateway.execute(ctx, "architect.plan.create", args))
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlanReviewScreen), "the review")
    return call, session.id


async def _answered(pilot: Pilot[Any], call: asyncio.Task[Envelope]) -> dict[str, Any]:
    await wait_for(pilot, call.done, "the call to end")
    await wait_for(pilot, lambda: not isinstance(pilot.app.screen, PlanReviewScreen), "closed")
    envelope = call.result()
    assert envelope.error is None, envelope.error
    result: dict[str, Any] = envelope.result
    return result


async def test_y_approves_the_plan_shown(parts: EngineParts) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call, session_id = await _propose(pilot, parts)
        review = app.screen
        assert isinstance(review, PlanReviewScreen)
        shown = str(review.query_one("#plan-text", Static).render())
        assert "Plan p1 (version 1, awaiting approval)" in shown
        assert "Layer 2 (together)" in shown and "[engineer]  Change part 1" in shown
        await pilot.press("y")
        result = await _answered(pilot, call)
        assert result["review"] == "approved" and result["status"] == "approved"
        [plan] = await parts.plans.plans(session_id)
        assert plan.status == "approved" and plan.decided_by == "user"


@pytest.mark.parametrize(("key", "kind"), [("m", "modify"), ("w", "why")])
async def test_m_and_w_send_typed_text_back(parts: EngineParts, key: str, kind: str) -> None:
    app = SylkApp(Engine.from_parts(parts))
    async with app.run_test(size=SIZE) as pilot:
        call, session_id = await _propose(pilot, parts)
        await pilot.press(key)
        field = app.screen.query_one("#plan-input", Input)
        assert field.has_focus and field.placeholder.startswith(("what should", "what would"))
        await pilot.press(*"add y tests")  # 'y' typed here is text, not approval
        await pilot.press("enter")
        result = await _answered(pilot, call)
        assert result["review"] == kind
        assert result["feedback" if kind == "modify" else "question"] == "add y tests"
        [plan] = await parts.plans.plans(session_id)
        assert plan.status == "awaiting_approval"


async def test_escape_decides_later_and_the_plan_waits_in_the_inbox(parts: EngineParts) -> None:
    engine = Engine.from_parts(parts)
    app = SylkApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        call, session_id = await _propose(pilot, parts)
        [asked] = app.state.pending.items()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the review closed")
        await pilot.pause()
        # Later means later: nothing was answered, the question and the badge stay.
        assert not call.done() and asked.question_id in app.state.pending
        assert app.screen.query_one(InboxBadge).count == 1
        assert [q.question_id for q in engine.pending_questions()] == [asked.question_id]
        [plan] = await parts.plans.plans(session_id)
        assert plan.status == "awaiting_approval"
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalsInbox), "the inbox")
        inbox = app.screen
        assert isinstance(inbox, ApprovalsInbox) and inbox.listed == [asked.question_id]
        await pilot.press("enter")  # its own dialog again; Escape goes back, still waiting
        await wait_for(pilot, lambda: isinstance(app.screen, PlanReviewScreen), "the review")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is inbox, "back in the inbox")
        await pilot.pause()
        assert inbox.listed == [asked.question_id] and not call.done()
        await pilot.press("y")
        result = await _answered(pilot, call)
        assert result["review"] == "approved" and result["status"] == "approved"
        await wait_for(pilot, lambda: inbox.listed == [], "answered")
        # Approved from the inbox, the plan runs.
        await until(lambda: engine.dag_status(session_id, "p1"), what="the plan's run")
