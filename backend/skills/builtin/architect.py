"""The Architect's plan ops: create, approve (review) and modify a plan, for real.

A plan arrives as a document in the seed's DAG schema (``plan``), from the Architect's
model or from any client with write rights (an MCP client, a tool), and is checked by
the same code as ``sylk plan validate``. An invalid plan is the op's error envelope
listing every problem with its path, so a model can correct it once; a second invalid
plan in the same agent turn is handed to the user (a notice with the problems) and the
model is told to stop, never retried forever. A request in words (``request``) is
planned by the Architect's model: another caller's request is handed to an Architect
turn in the session; the Architect itself is told to write the document; with no
model the answer says planning needs one.

The review (approve, modify, ask why, later) is the plan desk's
(:mod:`backend.plans.desk`); each op's result says what happened and what to do next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field, model_validator

from backend.archive.plan_book import StoredPlan
from backend.plans.desk import PlanDesk, ReviewOutcome
from backend.plans.errors import PlanError
from backend.plans.review import PlanningNeedsModelError
from backend.skills.builtin.declare import CONTEXTUAL, CORE, WRITE, Params, declare
from backend.skills.call_flags import turn_of
from backend.skills.envelopes import ErrorCode, SkillError
from backend.skills.models import Skill, SkillContext, SkillResult

AGENT = "architect"
SCHEMA_HINT = (
    "a plan document: {id, prompt, nodes: [{id, agent, prompt, context?, metadata?, "
    "depends_on: [ids]}], execution_order?, policy?}; agents: librarian, archivalist, "
    "academic, engineer, inspector, tester, architect, orchestrator, guide"
)


@dataclass(frozen=True)
class PlanWiring:
    """What the plan ops need from the engine."""

    desk: PlanDesk
    has_model: Callable[[], bool]  # is a model configured for the Architect?
    notify: Callable[[str, str], None]  # (session_id, text): a notice the user sees
    # (session_id, request): an Architect turn plans it; None where no engine runs turns
    plan_request: Callable[[str, str], Awaitable[object]] | None = None


class CreateParams(Params):
    plan: dict[str, Any] | None = Field(default=None, description=SCHEMA_HINT)
    request: str | None = Field(
        default=None, min_length=1, description="what to plan, in words (needs a model)"
    )
    constraints: list[str] = Field(default_factory=list, max_length=50)
    review: bool = Field(default=True, description="false: store as a draft, review later")

    @model_validator(mode="after")
    def _one_source(self) -> CreateParams:
        if (self.plan is None) == (self.request is None):
            raise ValueError("give either `plan` (a plan document) or `request` (words)")
        return self


class ApproveParams(Params):
    plan_id: str = Field(min_length=1)
    explanation: str = Field(default="", description="your answer to the user's last 'why'")


class ModifyParams(Params):
    plan_id: str = Field(min_length=1)
    feedback: str = Field(min_length=1, description="what the user asked to change")
    plan: dict[str, Any] = Field(description="the revised plan document (same id)")


class _Corrections:
    """Turns that already got one invalid plan back: the next one goes to the user."""

    def __init__(self) -> None:
        self._turns: set[tuple[str, str]] = set()

    def check(self, ctx: SkillContext, exc: PlanError, notify: Callable[[str, str], None]) -> None:
        turn = turn_of(ctx)
        if turn is None:
            raise exc  # a client outside a turn gets every error back, as asked
        key = (ctx.session_id, turn)
        if key not in self._turns:
            self._turns.add(key)
            raise exc
        self._turns.discard(key)
        notify(ctx.session_id, f"The {ctx.agent}'s plan is still invalid after one correction:\n"
               f"{exc.message}\nTell it what to change, or write the plan yourself.")  # fmt: skip
        raise SkillError(
            ErrorCode.VALIDATION_ERROR,
            "the plan is still invalid; its problems were handed to the user. Do not submit "
            "it again in this turn: tell the user what you tried and wait for their answer",
            details={"reason": "handed_to_user", "problems": (exc.details or {})["problems"]},
            help_path="architect.plan.create",
        )


def _summary(plan: StoredPlan) -> dict[str, Any]:
    return {
        "plan_id": plan.plan_id,
        "version": plan.version,
        "status": plan.status,
        "supersedes": plan.supersedes,
        "tasks": len(plan.document.get("nodes", [])),
        "execution_order": plan.document.get("execution_order"),
    }


def _next_step(done: ReviewOutcome) -> str:
    ref = done.plan.plan_id
    if done.outcome == "approved":
        return "the plan is approved; the Orchestrator runs approved plans"
    if done.outcome == "modify":
        return (
            f"call architect.plan.modify with plan_id {ref!r}, this feedback and the "
            "revised plan document"
        )
    if done.outcome == "why":
        return (
            f"answer the question: call architect.plan.approve with plan_id {ref!r} and "
            "your answer as `explanation`; the review comes back"
        )
    if done.outcome == "unattended":
        return (
            "nobody can review it now: it waits for approval; tell the user to approve it "
            f"with /plan approve {ref} (or see it with /plan show {ref})"
        )
    return f"the user decides later: it stays {done.plan.status}; /plan approve {ref} approves it"


def _reviewed(done: ReviewOutcome) -> SkillResult:
    result = _summary(done.plan) | {"review": done.outcome}
    if done.outcome == "modify":
        result["feedback"] = done.text
    elif done.outcome == "why":
        result["question"] = done.text
    return SkillResult(result=result | {"next": _next_step(done)})


def plan_skills(wiring: PlanWiring) -> list[Skill]:
    desk = wiring.desk
    corrections = _Corrections()

    async def create(ctx: SkillContext, params: CreateParams) -> SkillResult:
        if params.plan is None:
            return await _from_request(ctx, params.request or "", params.constraints)
        try:
            plan = await desk.propose(
                ctx.session_id, params.plan, source=ctx.agent, draft=not params.review
            )
        except PlanError as exc:
            corrections.check(ctx, exc, wiring.notify)
            raise
        if not params.review:
            return SkillResult(result=_summary(plan) | {"next": "architect.plan.approve shows "
                               "it for approval"})  # fmt: skip
        return _reviewed(await desk.review(ctx.session_id, plan.plan_id))

    async def _from_request(ctx: SkillContext, request: str, constraints: list[str]) -> SkillResult:
        if ctx.agent == AGENT:
            raise SkillError(
                ErrorCode.VALIDATION_ERROR,
                "you are the planner: write the plan yourself and pass it as `plan`",
                details={"reason": "write_the_plan", "schema": SCHEMA_HINT},
                help_path="architect.plan.create",
            )
        if not wiring.has_model():
            raise PlanningNeedsModelError()
        if wiring.plan_request is None:
            raise SkillError(ErrorCode.INTERNAL, "no Architect runs in this process",
                             details={"reason": "not_available"})  # fmt: skip
        before = {(p.plan_id, p.version) for p in await desk.plans(ctx.session_id)}
        text = request + "".join(f"\nConstraint: {c}" for c in constraints)
        await wiring.plan_request(ctx.session_id, "Plan this as a task DAG and submit it with "
                                  f"architect.plan.create:\n{text}")  # fmt: skip
        made = [p for p in await desk.plans(ctx.session_id) if (p.plan_id, p.version) not in before]
        if not made:
            raise SkillError(ErrorCode.CONFLICT, "the Architect answered without storing a plan",
                             details={"reason": "no_plan"})  # fmt: skip
        return SkillResult(result={"plans": [_summary(p) for p in made]})

    async def approve(ctx: SkillContext, params: ApproveParams) -> SkillResult:
        return _reviewed(
            await desk.review(ctx.session_id, params.plan_id, explanation=params.explanation)
        )

    async def modify(ctx: SkillContext, params: ModifyParams) -> SkillResult:
        try:
            plan = await desk.revise(
                ctx.session_id, params.plan_id, params.plan,
                feedback=params.feedback, source=ctx.agent,
            )  # fmt: skip
        except PlanError as exc:
            corrections.check(ctx, exc, wiring.notify)
            raise
        return _reviewed(await desk.review(ctx.session_id, plan.plan_id))

    return [
        declare("architect.plan.create", AGENT, "Create an implementation plan (a task DAG): "
                "pass the plan document as `plan` (checked, stored, shown to the user for "
                "approval), or a `request` in words for the Architect to plan.", CreateParams,
                create, tier=CORE, kind=WRITE, entry_point=True,
                tags=("plan", "implement", "build", "create", "design", "dag"),
                examples=[("submit a plan", {"plan": {"id": "p1", "nodes": [
                    {"id": "t1", "agent": "engineer", "prompt": "add login"}]}}),
                    ("plan from words", {"request": "add login", "constraints": ["no deps"]})],
                guidance=[("architect.plan.approve", "Show a draft plan for approval")]),
        declare("architect.plan.approve", AGENT, "Show a plan for the user's approval "
                "(again, after answering their 'why' as `explanation`).", ApproveParams,
                approve, tier=CORE, tags=("approve", "review", "confirm"),
                examples=[("ask approval", {"plan_id": "p1"})]),
        declare("architect.plan.modify", AGENT, "Replace an open plan with a revised version "
                "after the user's feedback; the new version is shown for approval.",
                ModifyParams, modify, tier=CONTEXTUAL, kind=WRITE,
                triggers=(r"\bchange\b", r"\bmodify", r"\bdifferent\b", r"\binstead\b"),
                tags=("change", "modify", "update plan"),
                examples=[("drop a step", {"plan_id": "p1", "feedback": "skip docs", "plan": {
                    "id": "p1", "nodes": [{"id": "t1", "agent": "engineer", "prompt": "x"}]}})]),
    ]  # fmt: skip
