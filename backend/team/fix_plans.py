"""Fix plans: what session QA found, made into a plan the user approves like any other.

With a model for the Architect, the Architect is asked (a request through the answer
path, as ``@architect`` would be) to write a fix plan for the findings; it submits it
with ``architect.plan.create``, which checks, stores and reviews it. Without one (the
offline provider), or when the Architect answered without storing a plan, the fix plan
is deterministic: one engineer node per affected file, its prompt the exact findings,
checked by the same plan checks and reviewed through the plan desk.

``architect.dag.create_fix`` (declared in :mod:`backend.skills.builtin.teams`) is the
same work as an op, for a model or an MCP client holding a list of issues.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from backend.archive.plan_book import StoredPlan
from backend.plans.desk import PlanDesk
from backend.plans.review import PlanStatus
from backend.skills.models import SkillContext, SkillResult
from backend.team.qa_checks import TEXT_MAX, Finding

MAX_FIX_NODES = 20  # files beyond this share the last node
FINDINGS_PER_NODE = 40
_WHERE = re.compile(r"^(?P<file>[^\s:]+\.[A-Za-z0-9]+):(?P<line>\d+)?")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:-]+")

AskArchitect = Callable[[str, str], Awaitable[object]]  # (session_id, request)


@dataclass(frozen=True, slots=True)
class FixPlanMade:
    """The fix plan as it stands after its review, and who wrote it."""

    plan: StoredPlan
    by: str  # "architect" (its model) or "qa" (the deterministic plan)
    review: str  # approved, unattended, later, modify, why (as the desk says)


def fix_plan_id(root_plan: str, round_no: int) -> str:
    return f"{root_plan[:100]}-fix{round_no}"


def findings_from_lines(lines: list[str], kind: str = "issue") -> list[Finding]:
    """Issue lines (``path:line: message``) from a caller, as findings naming their file."""
    found = []
    for text in lines:
        where = _WHERE.match(text.strip())
        line = where["line"] if where else None
        found.append(Finding(kind="failure" if kind == "tester" else "issue",
                             file=where["file"] if where else "",
                             line=int(line) if line else None,
                             text=text.strip()[:TEXT_MAX]))  # fmt: skip
    return found


def fix_plan_document(plan_id: str, root_plan: str, findings: list[Finding]) -> dict[str, Any]:
    """One engineer node per affected file, in parallel, each told its exact findings."""
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.file or "(no file named)", []).append(finding)
    groups = list(by_file.items())
    if len(groups) > MAX_FIX_NODES:
        rest = [f for _, fs in groups[MAX_FIX_NODES - 1 :] for f in fs]
        groups = [*groups[: MAX_FIX_NODES - 1], ("the remaining files", rest)]
    nodes = []
    for number, (file, found) in enumerate(groups, start=1):
        lines = [f"- {f.text}" for f in found[:FINDINGS_PER_NODE]]
        if len(found) > FINDINGS_PER_NODE:
            lines.append(f"- ... and {len(found) - FINDINGS_PER_NODE} more of the same kind")
        node: dict[str, Any] = {
            "id": f"fix{number}-" + (_ID_CHARS.sub("_", file)[:60] or "file"),
            "agent": "engineer",
            "prompt": (
                f"Session QA after plan {root_plan} found these problems in {file}. Fix "
                "them, changing nothing else:\n" + "\n".join(lines)
            ),
            "context": {"reason": "session QA findings"},
        }
        if by_file.get(file):
            node["context"]["relevant_files"] = [file]
        nodes.append(node)
    return {"id": plan_id, "prompt": f"Fix what session QA found after plan {root_plan}",
            "nodes": nodes}  # fmt: skip


def architect_request(plan_id: str, root_plan: str, findings: list[Finding]) -> str:
    lines = "\n".join(f"- {f.text}" for f in findings[: FINDINGS_PER_NODE * 2])
    return (
        f"Session QA after plan {root_plan} found the problems below. Write a fix plan (a "
        f"task DAG; its id {plan_id!r}) whose engineer nodes fix exactly these and nothing "
        f"else, and submit it with architect.plan.create:\n{lines}"
    )


class FixPlanner:
    """``ask_architect`` is None or ``has_model()`` false: the deterministic plan."""

    def __init__(
        self,
        desk: PlanDesk,
        *,
        has_model: Callable[[], bool],
        ask_architect: AskArchitect | None,
        notify: Callable[[str, str], Awaitable[object]],
    ) -> None:
        self._desk = desk
        self._has_model = has_model
        self._ask = ask_architect
        self._notify = notify

    async def create(
        self,
        session_id: str,
        findings: list[Finding],
        *,
        plan_id: str,
        root_plan: str,
        ask_architect: bool = True,
    ) -> FixPlanMade:
        """A fix plan for ``findings``, stored and reviewed (PlanError: it failed the checks).

        ``ask_architect`` false: the deterministic plan (the Architect itself asked for it).
        """
        if ask_architect and self._ask is not None and self._has_model():
            made = await self._by_architect(session_id, findings, plan_id, root_plan)
            if made is not None:
                return made
            await self._notify(session_id, "The Architect answered without storing a fix "
                               "plan: QA made one task per affected file instead.")  # fmt: skip
        document = fix_plan_document(plan_id, root_plan, findings)
        await self._desk.propose(session_id, document, source="architect")
        done = await self._desk.review(session_id, plan_id)
        return FixPlanMade(done.plan, "qa", done.outcome)

    async def _by_architect(
        self, session_id: str, findings: list[Finding], plan_id: str, root_plan: str
    ) -> FixPlanMade | None:
        assert self._ask is not None
        before = {(p.plan_id, p.version) for p in await self._desk.plans(session_id)}
        await self._ask(session_id, architect_request(plan_id, root_plan, findings))
        made = [
            p for p in await self._desk.plans(session_id) if (p.plan_id, p.version) not in before
        ]
        if not made:
            return None
        plan = next((p for p in made if p.plan_id == plan_id), made[-1])
        plan = await self._desk.latest(session_id, plan.plan_id)
        review = "approved" if plan.status == PlanStatus.APPROVED else "unattended"
        return FixPlanMade(plan, "architect", review)


def create_fix_handler(
    planner: FixPlanner, next_id: Callable[[str], Awaitable[tuple[str, str]]]
) -> Callable[[SkillContext, Any], Awaitable[SkillResult]]:
    """``architect.dag.create_fix {issues, source}``: a fix plan for the issues, reviewed.

    ``next_id(session_id)`` names the plan (and the plan it fixes) from the session's QA.
    """

    async def handler(ctx: SkillContext, params: Any) -> SkillResult:
        plan_id, root = await next_id(ctx.session_id)
        findings = findings_from_lines(list(params.issues), params.source)
        made = await planner.create(ctx.session_id, findings, plan_id=plan_id, root_plan=root,
                                    ask_architect=ctx.agent != "architect")  # fmt: skip
        plan = made.plan
        return SkillResult(result={
            "plan_id": plan.plan_id, "version": plan.version, "status": plan.status,
            "tasks": len(plan.document.get("nodes", [])), "written_by": made.by,
            "review": made.review,
            "next": "approved: the Orchestrator runs it, then QA checks again"
            if plan.status == PlanStatus.APPROVED
            else f"it waits for the user: /plan approve {plan.plan_id}",
        })  # fmt: skip

    return handler
