"""Phase routes: a short line means something else while a plan runs or waits, and only
then; ordinary requests that merely contain "stop", "also" or "why" keep their agent."""

from __future__ import annotations

import pytest

from backend.guide.routing.decision import Target
from backend.guide.routing.phase_rules import PhaseView, decision, match
from backend.guide.routing.router import Router

RUNNING = PhaseView("execution", running_plan="p1")
WAITING = PhaseView("planning", open_plan="p1")
IDLE = PhaseView("idle")


@pytest.mark.parametrize(
    "text", ["stop", "Stop!", "halt", "cancel the plan", "please stop it now", "ok, abort"]
)
def test_stop_while_a_plan_runs(text: str) -> None:
    found = match(text, RUNNING)
    assert found is not None and found.action == "stop" and found.plan_id == "p1"


@pytest.mark.parametrize(
    "text",
    ["what's taking so long?", "What\u2019s taking so long", "status?", "how far along",
     "how far along are we?", "progress", "how much longer?", "are we done yet?"],
)  # fmt: skip
def test_status_while_a_plan_runs(text: str) -> None:
    found = match(text, RUNNING)
    assert found is not None and found.action == "status"


@pytest.mark.parametrize(
    ("text", "feedback"),
    [("actually also add X", "add X"), ("Actually, also add a --quiet flag", "add a --quiet flag"),
     ("also add per-endpoint config", "add per-endpoint config"),
     ("actually, use TOML instead", "use TOML instead"),
     ("can you also handle Windows paths?", "handle Windows paths?")],
)  # fmt: skip
def test_a_revision_keeps_the_users_words(text: str, feedback: str) -> None:
    for view in (RUNNING, WAITING):
        found = match(text, view)
        assert found is not None and found.action == "revise" and found.text == feedback


@pytest.mark.parametrize(
    "text", ["approve", "looks good, go", "LGTM", "ok go ahead", "yes, approve it", "ship it!"]
)
def test_approve_while_a_plan_waits(text: str) -> None:
    found = match(text, WAITING)
    assert found is not None and found.action == "approve"
    made = decision(found, text)
    assert made.target is Target.GUIDE and made.tier == "phase"
    assert made.command == {"verb": "plan", "action": "approve", "id": "p1"}


@pytest.mark.parametrize(
    "text", ["why three levels?", "Why is there a librarian step?", "explain the plan",
             "what does the plan do about tests?", "why not one engineer?"],
)  # fmt: skip
def test_a_question_about_the_waiting_plan_goes_to_the_architect(text: str) -> None:
    found = match(text, WAITING)
    assert found is not None and found.action == "why"


@pytest.mark.parametrize(
    ("text", "view"),
    [
        # stop words inside ordinary requests, in every phase
        ("stop the retry loop when the queue is empty", RUNNING),
        ("add a stop button to the toolbar", RUNNING),
        ("stop the retry loop when the queue is empty", WAITING),
        ("cancel", IDLE),
        ("stop", WAITING),  # nothing runs: "stop" is no interrupt
        ("approve", RUNNING),  # nothing waits for approval while it runs
        ("approve", IDLE),
        ("also add X", IDLE),  # no plan: an ordinary change request
        ("status?", IDLE),
        # codebase questions while a plan waits: the Librarian's, then back
        ("show me the existing middleware", WAITING),
        ("why does the cache invalidate on write?", WAITING),
        ("where is the CLI defined?", WAITING),
        ("/plan approve p1", WAITING),
        ("@architect why three levels?", WAITING),
        ("what's taking so long?", WAITING),
    ],
)
def test_ordinary_lines_are_left_to_the_other_tiers(text: str, view: PhaseView) -> None:
    assert match(text, view) is None


async def test_the_router_asks_the_session_phase_before_its_cache() -> None:
    router = Router()
    views = {"s1": RUNNING, "s2": IDLE}

    async def view(session_id: str) -> PhaseView | None:
        return views.get(session_id)

    plain = await router.route("stop")  # no session: the ordinary tiers
    assert plain.tier != "phase"
    router.phase_view = view
    stop = await router.route("stop", session_id="s1")
    assert stop.tier == "phase" and stop.command is not None
    assert stop.command["verb"] == "phase" and stop.command["action"] == "stop"
    again = await router.route("stop", session_id="s2")  # cached meanwhile? not phase-routed
    assert again.tier != "phase"
    assert (await router.route("stop", session_id="nope")).tier != "phase"
    mention = await router.route("@librarian stop", session_id="s1")
    assert mention.target is Target.LIBRARIAN


STOPPED = PhaseView("planning", stopped_plan="p1")
INSPECTION = PhaseView("inspection")


@pytest.mark.parametrize(
    ("text", "action"),
    [("resume", "resume"), ("continue", "resume"), ("ok, go on", "resume"),
     ("carry on with the plan", "resume"), ("also add X", "revise"), ("status?", "status")],
)  # fmt: skip
def test_after_a_stop(text: str, action: str) -> None:
    found = match(text, STOPPED)
    assert found is not None and found.action == action and found.plan_id == "p1"


@pytest.mark.parametrize(
    ("text", "command"),
    [("skip the tests", "skip-tests"), ("just skip tests for now", "skip-tests"),
     ("don't run the tests", "skip-tests"), ("ignore that finding", "override"),
     ("that's fine, ignore those warnings", "override"), ("override", "override"),
     ("status?", "status")],
)  # fmt: skip
def test_during_qa_the_qa_commands(text: str, command: str) -> None:
    for view in (INSPECTION, PhaseView("testing")):
        found = match(text, view)
        assert found is not None
        assert decision(found, text).command == {"verb": "qa", "action": command}


@pytest.mark.parametrize(
    ("text", "view"),
    [("skip the tests", RUNNING), ("skip the tests", IDLE), ("ignore that finding", WAITING),
     ("skip the tests in CI for docs-only changes", INSPECTION), ("resume", IDLE),
     ("continue the refactor of the parser", STOPPED), ("stop", INSPECTION)],
)  # fmt: skip
def test_qa_and_resume_words_elsewhere_are_ordinary(text: str, view: PhaseView) -> None:
    assert match(text, view) is None
