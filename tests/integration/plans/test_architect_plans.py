"""The Architect's plans through the engine with the scripted model: a plan document is
checked, stored with its status, reviewed (--yes, nobody attached, /plan), corrected
once and then handed to the user, and survives a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.engine import Engine
from backend.events import EngineEvent, EngineNotice, PlanApproved, PlanChanged
from tests.integration.plans.conftest import (
    bad_doc,
    create,
    parts,
    plan_doc,
    say,
    scripted,
    tool_results,
)


def _collect(engine: Engine) -> list[EngineEvent]:
    seen: list[EngineEvent] = []
    engine.events.add_listener(seen.append)
    return seen


async def test_yes_approves_a_valid_plan_and_publishes_it_for_the_orchestrator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"text": "Planning.", "tool_calls": [create(plan_doc())]},
        {"text": "Plan p1 is approved."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace, assume_yes=True)
    engine = Engine.from_parts(engine_parts)
    seen = _collect(engine)
    try:
        session = await engine.ensure_session()
        reply = await say(engine, session.id, "@architect add a --verbose flag")
        assert reply["stop"] == "final", reply
        [result] = tool_results(engine_parts, session.id)
        assert result["result"]["review"] == "approved", result
        assert result["result"]["execution_order"] == [["t1"], ["e1", "e2"]]
        [plan] = await engine.plans(session.id)
        assert (plan.plan_id, plan.version, plan.status, plan.decided_by) == ("p1", 1, "approved",
                                                                              "yes")  # fmt: skip
        assert plan.document["session_id"] == session.id and plan.source == "architect"
        approved = [e for e in seen if isinstance(e, PlanApproved)]
        assert [(e.plan_id, e.version, e.session_id) for e in approved] == [("p1", 1, session.id)]
        assert approved[0].document["execution_order"] == [["t1"], ["e1", "e2"]]
        moves = [(e.status, e.old_status) for e in seen if isinstance(e, PlanChanged)]
        assert moves == [("awaiting_approval", None), ("approved", "awaiting_approval")]
    finally:
        await engine.aclose()
    again = Engine.from_parts(parts(data_dir, workspace))
    try:
        [plan] = await again.plans(session.id)
        assert plan.status == "approved"
        listing = await say(again, session.id, "/plan")
        assert "p1" in listing["text"] and "approved" in listing["text"]
    finally:
        await again.aclose()


async def test_nobody_to_ask_leaves_the_plan_awaiting_and_plan_approve_decides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"tool_calls": [create(plan_doc())]},
        {"text": "Approve it with /plan approve p1."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace)
    engine = Engine.from_parts(engine_parts)
    seen = _collect(engine)
    try:
        session = await engine.ensure_session()
        await say(engine, session.id, "@architect add a --verbose flag")
        [result] = tool_results(engine_parts, session.id)
        assert result["result"]["review"] == "unattended"
        assert "/plan approve p1" in result["result"]["next"]
        shown = await say(engine, session.id, "/plan show p1")
        assert "Plan p1 (version 1, awaiting approval)" in shown["text"]
        assert (
            "Layer 2 (together)" in shown["text"] and "[engineer]  Change part 2" in shown["text"]
        )
        assert not [e for e in seen if isinstance(e, PlanApproved)]
        approved = await say(engine, session.id, "/plan approve p1")
        assert approved["text"] == "approved plan p1 (version 1)"
        assert [e.plan_id for e in seen if isinstance(e, PlanApproved)] == ["p1"]
        late = await say(engine, session.id, "/plan reject p1")
        assert "is approved: it cannot be rejected" in late["text"] and late.get("error")
        missing = await say(engine, session.id, "/plan approve nope")
        assert "no plan 'nope'" in missing["text"]
        [plan] = await engine.plans(session.id)
        assert plan.status == "approved" and plan.decided_by == "user"
    finally:
        await engine.aclose()


async def test_an_invalid_plan_goes_back_once_then_the_corrected_one_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"tool_calls": [create(bad_doc())]},
        {"tool_calls": [create(plan_doc())]},
        {"text": "Fixed and stored."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace, assume_yes=True)
    engine = Engine.from_parts(engine_parts)
    seen = _collect(engine)
    try:
        session = await engine.ensure_session()
        await say(engine, session.id, "@architect add a --verbose flag")
        first, second = tool_results(engine_parts, session.id)
        assert first["error"]["code"] == "VALIDATION_ERROR"
        problems = {(p["code"], p["path"]) for p in first["error"]["details"]["problems"]}
        assert problems == {("unknown_agent", "nodes[0].agent"),
                            ("missing_dependency", "nodes[1].depends_on[0]")}  # fmt: skip
        assert second["result"]["review"] == "approved"
        assert [p.status for p in await engine.plans(session.id)] == ["approved"]
        assert not [e for e in seen if isinstance(e, EngineNotice) and "invalid" in e.text]
    finally:
        await engine.aclose()


async def test_a_second_invalid_plan_in_the_turn_is_handed_to_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    scripted(tmp_path, monkeypatch, [
        {"tool_calls": [create(bad_doc())]},
        {"tool_calls": [create(bad_doc())]},
        {"text": "I could not write a valid plan."},
        {"tool_calls": [create(bad_doc())]},  # a new turn gets its one correction again
        {"text": "Still not."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace, assume_yes=True)
    engine = Engine.from_parts(engine_parts)
    seen = _collect(engine)
    try:
        session = await engine.ensure_session()
        await say(engine, session.id, "@architect add a --verbose flag")
        first, second = tool_results(engine_parts, session.id)
        assert "reason" not in first["error"]["details"]
        assert second["error"]["details"]["reason"] == "handed_to_user"
        assert "Do not submit it again" in second["error"]["message"]
        [notice] = [e for e in seen if isinstance(e, EngineNotice) and "still invalid" in e.text]
        assert notice.session_id == session.id and notice.level == "warning"
        assert "nodes[0].agent" in notice.text and "nodes[1].depends_on[0]" in notice.text
        assert await engine.plans(session.id) == []
        await say(engine, session.id, "@architect try again")
        third = tool_results(engine_parts, session.id)[2]
        assert "reason" not in third["error"]["details"]  # back to the model, not the user
    finally:
        await engine.aclose()


async def test_review_answers_modify_then_why_then_approve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    revised = plan_doc(engineers=3)
    scripted(tmp_path, monkeypatch, [
        {"tool_calls": [create(plan_doc())]},
        {"tool_calls": [{"name": "execute", "arguments": {"op": "architect.plan.modify", "args": {
            "plan_id": "p1", "feedback": "also a third part", "plan": revised},
            "dry_run": False}}]},
        {"tool_calls": [{"name": "execute", "arguments": {"op": "architect.plan.approve", "args": {
            "plan_id": "p1", "explanation": "Three parts keep each change small."}}}]},
        {"text": "Approved."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace)
    engine = Engine.from_parts(engine_parts)
    answers = iter(["modify:also a third part", "why:why three parts?", "approve"])
    asked: list[Any] = []

    def answer(event: EngineEvent) -> None:
        if event.kind == "question.asked":
            asked.append(event.question)
            event.answer.set_result(next(answers))

    engine.events.add_listener(answer)
    detach = engine.attach_questions()
    try:
        session = await engine.ensure_session()
        await say(engine, session.id, "@architect add a --verbose flag")
        results = [r["result"] for r in tool_results(engine_parts, session.id)]
        assert [r["review"] for r in results] == ["modify", "why", "approved"]
        assert results[0]["feedback"] == "also a third part"
        assert results[1]["question"] == "why three parts?" and results[1]["version"] == 2
        reviews = [q.plan for q in asked]
        assert [(r.plan_id, r.version) for r in reviews] == [("p1", 1), ("p1", 2), ("p1", 2)]
        assert reviews[2].explanation == "Three parts keep each change small."
        assert "e3" in reviews[1].text
        versions = await engine.plans(session.id)
        assert [(p.version, p.status, p.supersedes) for p in versions] == [
            (1, "superseded", None), (2, "approved", 1)]  # fmt: skip
        assert versions[1].feedback == "also a third part"
    finally:
        detach()
        await engine.aclose()


async def test_a_request_in_words_is_planned_by_an_architect_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path, workspace: Path
) -> None:
    from backend.agents.gateway_tools import GatewayToolExecutor
    from backend.skills.builtin.catalog import agent_context
    from tests.support.scripted import execute

    scripted(tmp_path, monkeypatch, [
        {"tool_calls": [create(plan_doc("words"))]},
        {"text": "Planned."},
        {"tool_calls": [execute("architect.plan.create", request="plan it yourself")]},
        {"text": "Understood."},
    ])  # fmt: skip
    engine_parts = parts(data_dir, workspace, assume_yes=True)
    engine = Engine.from_parts(engine_parts)
    try:
        session = await engine.ensure_session()
        guide = GatewayToolExecutor(engine_parts.gateway,
                                    agent_context("guide", session.id, workspace))  # fmt: skip
        call = {"op": "architect.plan.create", "args": {"request": "add a --verbose flag"}}
        made = await guide.dispatch("execute", call)
        assert made.error is None, made.error
        [plan] = made.result["plans"]
        assert (plan["plan_id"], plan["status"]) == ("words", "approved")
        await say(engine, session.id, "@architect plan something")
        told = tool_results(engine_parts, session.id)[-1]
        assert told["error"]["details"]["reason"] == "write_the_plan"
    finally:
        await engine.aclose()
