"""Plans wired into an engine: the plan desk, the Architect's plan ops, ``/plan``.

The desk stores every plan of a session in the archive (``backend.archive.plan_book``)
and reviews it through the engine's question board; the ops reach the Architect's model
and the answer pipeline through callables, because those are built after the gateway.
``/plan`` lists the session's plans, shows one, and approves or rejects it from any
front end (the way to decide a plan that waited while nobody could be asked).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from backend.archive.plan_book import PlanBook, StoredPlan
from backend.archive.store import Archive
from backend.errors import CommandError
from backend.events import EngineNotice, EventStream
from backend.plans.desk import PlanDesk
from backend.plans.review import render_plan
from backend.questions import QuestionBoard
from backend.skills.builtin.architect import PlanWiring

PLAN_USAGE = "/plan · /plan show ID · /plan approve ID · /plan reject ID"


def plan_desk(
    archive: Archive, events: EventStream, questions: QuestionBoard, *, assume_yes: bool
) -> PlanDesk:
    return PlanDesk(PlanBook(archive), events.publish, questions, assume_yes=lambda: assume_yes)


def plan_wiring(
    desk: PlanDesk,
    events: EventStream,
    *,
    has_model: Callable[[], bool],
    plan_request: Callable[[str, str], Awaitable[object]],
) -> PlanWiring:
    def notify(session_id: str, text: str) -> None:
        events.publish(EngineNotice(session_id=session_id, level="warning", text=text))

    return PlanWiring(desk=desk, has_model=has_model, notify=notify, plan_request=plan_request)


async def plan_command(desk: PlanDesk, session_id: str, args: dict[str, str]) -> str:
    """``/plan [show|approve|reject ID]``: the answer, as text."""
    action, ref = args.get("action", "list"), args.get("id", "")
    if action == "list":
        return _listing(await desk.plans(session_id))
    if not ref:
        raise CommandError(f"which plan should I {action}?", help_hint=PLAN_USAGE)
    if action == "show":
        plan = await desk.latest(session_id, ref)
        return render_plan(plan.document, version=plan.version, status=plan.status)
    if action == "approve":
        plan = await desk.approve(session_id, ref, by="user")
        return f"approved plan {plan.plan_id} (version {plan.version})"
    if action == "reject":
        plan = await desk.reject(session_id, ref, by="user")
        return f"rejected plan {plan.plan_id} (version {plan.version})"
    raise CommandError(f"unknown plan action {action!r}", help_hint=PLAN_USAGE)


def _listing(plans: list[StoredPlan]) -> str:
    if not plans:
        return "no plans in this session (the Architect proposes them; /help plan)"
    lines = [f"{'PLAN':<16} {'VER':>3}  {'STATUS':<18} TASKS"]
    for plan in plans:
        status = plan.status.replace("_", " ")
        if plan.supersedes is not None:
            status += f" (<- v{plan.supersedes})"
        tasks = len(plan.document.get("nodes", []))
        lines.append(f"{plan.plan_id[:16]:<16} {plan.version:>3}  {status:<18} {tasks:>5}")
    return "\n".join(lines)
