"""Phase-aware routes: what a short line means while a plan runs or waits for approval.

The seed's "Phase-Based User Interaction": while a plan's DAG runs, "stop" stops it,
"actually, also add X" revises the plan, "what's taking so long?" asks for its status;
while a plan waits for approval, "looks good, go" approves it, "also add per-endpoint
config" asks the Architect for a revised version, and "why three levels?" asks the
Architect about the plan; after a stop, "resume" runs the rest; during the session's QA
(inspection, testing), "skip the tests" and "ignore that finding" are ``/qa skip-tests``
and ``/qa override``. Everything else (a codebase question in the middle of
planning, a coding request that happens to contain "stop") goes through the ordinary
tiers, so the phase stays what it was.

Each rule is small and anchored to the whole line (or to its start, for a revision):
"stop" alone is an interrupt; "stop the retry loop when the queue is empty" is a
request. Rules apply only in the state they are for (:class:`PhaseView`), and the
router asks them before its cache, so a line's meaning can change with the phase.
Matching is pure; carrying a route out is the engine's (``verb: phase``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from backend.guide.routing.decision import RouteDecision, Target

PhaseAction = Literal[
    "stop", "resume", "revise", "status", "why", "approve", "skip-tests", "override", "qa-status"
]
QA_PHASES = ("inspection", "testing")  # the session's QA after a plan (``/qa``)

PHASE_VERB = "phase"  # the command verb of a phase route (``/plan approve`` for approvals)
FEEDBACK_MAX = 2000


@dataclass(frozen=True, slots=True)
class PhaseView:
    """What the rules need to know about a session: its phase, the plan whose DAG runs
    in it now, the newest plan waiting for the user's approval, and an approved plan
    whose DAG was stopped (or failed) and waits for the user's word."""

    phase: str
    running_plan: str | None = None
    open_plan: str | None = None
    stopped_plan: str | None = None


@dataclass(frozen=True, slots=True)
class PhaseRoute:
    action: PhaseAction
    plan_id: str
    text: str  # the user's feedback (revise), question (why, status) or line


_END = r"[\s.!?]*$"
_POLITE = r"(?:(?:ok|okay|please|hey|no|wait|hold on|guys)[,\s]+)*"

# "stop", "halt!", "please cancel the plan", "stop it now".
_STOP = re.compile(
    rf"^{_POLITE}(?:stop|halt|abort|cancel|kill)(?:[\s,]+(?:it|that|this|now|everything|all"
    r"|please|right now|immediately|the (?:plan|run|dag|work|execution|whole thing)"
    rf"|running|work(?:ing)?))*{_END}"
)
# "what's taking so long?", "status?", "how far along are we", "how much longer".
_STATUS = re.compile(
    r"^(?:so[,\s]+)?(?:what(?:'s| is) taking (?:so )?long"
    r"|(?:status|progress)(?: update)?"
    r"|what(?:'s| is) the (?:status|progress)(?: (?:of|on) (?:the )?(?:plan|run|dag|work))?"
    r"|how far (?:along )?(?:are (?:we|you|things)|is (?:it|the plan))(?: along)?"
    r"|how far along"
    r"|how(?:'s| is) (?:it|the plan|the run|the work) (?:going|coming along)"
    r"|how much longer(?: (?:will (?:it|this) take|is (?:it|this)))?"
    r"|are (?:we|you) (?:done|there) yet"
    r"|where are (?:we|you|things) (?:at|now))"
    rf"{_END}"
)
# "actually, also add X", "also add X", "and also handle Y", "can you also Z".
_REVISE = re.compile(
    r"^(?:(?:actually|wait|oh|hmm|ok|okay|and)[,\s]+)*"
    r"(?:(?:can|could|would) you |please |let'?s |we should |you should )?also\s+"
    r"(?P<rest>\S.*)$"
)
# "actually, add X" / "actually, make it Y": a revision said without "also".
_ACTUALLY = re.compile(
    r"^actually[,\s]+(?:(?:can|could) you |please |let'?s |we should )?(?P<rest>(?:add|include"
    r"|make|use|drop|remove|skip|change|rename|split|handle|support|keep|put|move)\b.*)$"
)
# While a plan waits: "change the plan: ...", "modify it so ...".
_MODIFY = re.compile(
    r"^(?:please )?(?:change|modify|revise|update|rework) (?:the|this|your) plan\b"
)
# "approve", "looks good, go", "lgtm", "ok go ahead", "yes, approve it".
_APPROVE = re.compile(
    r"^(?:(?:ok|okay|yes|yep|yeah|sure|great|perfect|fine|good|thanks)[,\s!]+)*"
    r"(?:approved?(?: (?:it|that|this|the plan|plan))?|looks (?:good|great|fine)(?: to me)?"
    r"|lgtm|go(?: ahead)?|ship it|do it|proceed|sounds good|let'?s go|go for it|run it)"
    r"(?:[,\s!]+(?:go|go ahead|do it|proceed|run it|approve(?: it)?|thanks|thank you))*"
    rf"{_END}"
)
# After a stop: "resume", "continue", "go on", "carry on with the plan".
_RESUME = re.compile(
    rf"^{_POLITE}(?:resume|continue|go on|carry on|keep going|restart|start again)"
    r"(?:[\s,]+(?:with )?(?:it|the plan|the run|the work|please"
    rf"|where (?:you|we) (?:stopped|left off)))*{_END}"
)
# During QA: "skip the tests", "don't run the tests"; "ignore that finding", "override".
_SKIP_TESTS = re.compile(
    rf"^{_POLITE}(?:(?:just )?skip (?:the |running the |all the )?(?:tests?|testing|test run)"
    rf"|(?:don't|do not) (?:bother )?(?:run(?:ning)?|do(?:ing)?) (?:the )?tests?|no tests)"
    rf"(?:[\s,]+(?:please|this time|for now|now))*{_END}"
)
_OVERRIDE = re.compile(
    rf"^{_POLITE}(?:(?:that's|that is|it's) (?:fine|ok|okay)[,\s]+)?(?:(?:ignore|override|accept"
    r"|dismiss) (?:that|this|the|these|those|all the|all) (?:findings?|issues?|warnings?|lint"
    r"(?: errors)?)|override(?: it)?|ignore (?:it|that))"
    rf"(?:[\s,]+(?:please|this time|for now|now))*{_END}"
)
# A question about the plan: "why three levels?", "why is there a librarian step?",
# "what does the plan do about tests?", "explain the plan". "why does the cache ..."
# stays a codebase question (the Librarian explains code).
_WHY = re.compile(
    r"^(?:why (?:three|two|four|five|\d+|so many|these|those|this|that|the|a|an|not|separate"
    r"|do (?:we|you) need|is there|are there|did you|would you|start|first|last|split)\b"
    r"|(?:explain|justify|walk me through) (?:the|this|your) plan\b"
    r"|.*\b(?:the|this|your) plan\b.*\?\s*$)"
)


def normalise(text: str) -> str:
    """Lower case, one space, the curly apostrophe straightened."""
    return " ".join(text.replace("\u2019", "'").lower().split())


def match(text: str, view: PhaseView) -> PhaseRoute | None:
    """The phase route ``text`` takes in ``view``, or None for the ordinary tiers."""
    said = normalise(text)
    if not said or said.startswith(("/", "@")):
        return None
    if view.running_plan is not None:
        return _while_running(said, text.strip(), view.running_plan)
    if view.open_plan is not None:
        return _while_waiting(said, text.strip(), view.open_plan)
    if view.stopped_plan is not None:
        return _while_stopped(said, text.strip(), view.stopped_plan)
    if view.phase in QA_PHASES:
        return _during_qa(said, text.strip())
    return None


def _while_running(said: str, raw: str, plan_id: str) -> PhaseRoute | None:
    if _STOP.match(said):
        return PhaseRoute("stop", plan_id, raw)
    if _STATUS.match(said):
        return PhaseRoute("status", plan_id, raw)
    feedback = _revision(said, raw)
    if feedback is not None:
        return PhaseRoute("revise", plan_id, feedback)
    return None


def _while_waiting(said: str, raw: str, plan_id: str) -> PhaseRoute | None:
    if _APPROVE.match(said):
        return PhaseRoute("approve", plan_id, raw)
    feedback = _revision(said, raw)
    if feedback is not None:
        return PhaseRoute("revise", plan_id, feedback)
    if _MODIFY.match(said):
        return PhaseRoute("revise", plan_id, raw[:FEEDBACK_MAX])
    if _WHY.match(said):
        return PhaseRoute("why", plan_id, raw)
    return None


def _while_stopped(said: str, raw: str, plan_id: str) -> PhaseRoute | None:
    if _RESUME.match(said):
        return PhaseRoute("resume", plan_id, raw)
    if _STATUS.match(said):
        return PhaseRoute("status", plan_id, raw)
    feedback = _revision(said, raw)
    if feedback is not None:
        return PhaseRoute("revise", plan_id, feedback)
    return None


def _during_qa(said: str, raw: str) -> PhaseRoute | None:
    if _SKIP_TESTS.match(said):
        return PhaseRoute("skip-tests", "", raw)
    if _OVERRIDE.match(said):
        return PhaseRoute("override", "", raw)
    if _STATUS.match(said):
        return PhaseRoute("qa-status", "", raw)
    return None


def _revision(said: str, raw: str) -> str | None:
    """The change asked for ("also add X" -> "add X"), in the user's own case."""
    found = _REVISE.match(said) or _ACTUALLY.match(said)
    if found is None:
        return None
    start = len(said) - len(found.group("rest"))
    words = " ".join(raw.replace("\u2019", "'").split())
    return words[start:][:FEEDBACK_MAX].strip() or None


def decision(route: PhaseRoute, text: str) -> RouteDecision:
    """The Guide's decision for a phase route: ``/plan approve ID`` for an approval,
    ``/qa ACTION`` during QA, else a ``phase`` command the engine carries out (stop,
    resume, revise, status, why)."""
    if route.action == "approve":
        command = {"verb": "plan", "action": "approve", "id": route.plan_id}
    elif route.action in ("skip-tests", "override", "qa-status"):
        command = {"verb": "qa", "action": route.action.removeprefix("qa-")}
    else:
        command = {"verb": PHASE_VERB, "action": route.action, "plan_id": route.plan_id,
                   "text": route.text}  # fmt: skip
    return RouteDecision(
        target=Target.GUIDE, confidence=1.0, tier="phase", command=command, text=text.strip()
    )
