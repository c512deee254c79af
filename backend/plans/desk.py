"""The plan desk: plans checked, stored per session with their status, and reviewed.

Every plan, whoever wrote it (the Architect's model, an MCP client, a tool), passes the
same checks (:func:`backend.plans.document.load_plan`) before it is stored; the desk
rewrites its ``session_id`` to the session it is submitted in, so a plan cannot place
itself in another session. A review asks the user through the
:class:`~backend.questions.QuestionBoard` (an event carrying a future): ``sylk run
--yes`` approves at once; with no front end that shows questions the plan waits as
``awaiting_approval`` and ``/plan approve ID`` decides it later, from any front end.
An approval is committed, then published as :class:`~backend.events.PlanApproved`
(the Orchestrator's cue); every stored version and status move as
:class:`~backend.events.PlanChanged`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from backend.archive.plan_book import PlanBook, StoredPlan
from backend.clock import utc_now
from backend.events import EngineEvent, PlanApproved, PlanChanged
from backend.plans.document import load_plan
from backend.plans.review import (
    OPEN,
    PlanClosedError,
    PlanExistsError,
    PlanNotFoundError,
    PlanStatus,
    ReviewAnswer,
    parse_answer,
    review_question,
)
from backend.plans.validated_plan import ValidatedPlan
from backend.questions import QuestionBoard
from backend.roles import AGENT_ROLES

Outcome = Literal["approved", "modify", "why", "later", "unattended"]


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """How a review ended: the plan as it now stands and what the user said."""

    plan: StoredPlan
    outcome: Outcome
    text: str = ""  # the feedback (modify) or the question (why)


class PlanDesk:
    def __init__(
        self,
        book: PlanBook,
        publish: Callable[[EngineEvent], None],
        questions: QuestionBoard,
        *,
        assume_yes: Callable[[], bool] = lambda: False,
        agents: Sequence[str] = AGENT_ROLES,
    ) -> None:
        self._book = book
        self._publish = publish
        self._questions = questions
        self._assume_yes = assume_yes
        self._agents = agents
        self._reopened: set[tuple[str, str, int]] = set()  # approved versions that may change

    # -- reading -------------------------------------------------------------------
    async def plans(self, session_id: str) -> list[StoredPlan]:
        """Every version of every plan of the session, oldest first."""
        return await self._book.versions(session_id)

    async def latest(self, session_id: str, plan_id: str) -> StoredPlan:
        """The newest version of the plan; PlanNotFoundError if the session has none."""
        versions = await self._book.versions(session_id, plan_id)
        if not versions:
            raise PlanNotFoundError(plan_id)
        return versions[-1]

    def check(self, session_id: str, document: object) -> ValidatedPlan:
        """``document`` validated as a plan of ``session_id`` (PlanError lists every problem)."""
        if isinstance(document, dict):
            document = {**document, "session_id": session_id}
        return load_plan(document, agents=self._agents)

    # -- storing -------------------------------------------------------------------
    async def propose(
        self, session_id: str, document: object, *, source: str, draft: bool = False
    ) -> StoredPlan:
        """Check and store a new plan (a draft, or awaiting approval)."""
        checked = self.check(session_id, document)
        existing = await self._book.versions(session_id, checked.id)
        if existing:
            raise PlanExistsError(checked.id, existing[-1].status)
        status = PlanStatus.DRAFT if draft else PlanStatus.AWAITING_APPROVAL
        plan = self._new(session_id, checked, version=1, status=status, source=source)
        await self._book.add(plan)
        self._changed(plan, None)
        return plan

    def reopen(self, session_id: str, plan_id: str, version: int) -> None:
        """Let an approved version be revised once (its DAG was stopped, or failed): the
        user's "actually, also add X" then gives a new version to approve."""
        self._reopened.add((session_id, plan_id, version))

    async def revise(
        self, session_id: str, plan_id: str, document: object, *, feedback: str, source: str
    ) -> StoredPlan:
        """A new version of an open plan, superseding it (linked by ``supersedes``)."""
        old = await self.latest(session_id, plan_id)
        reopened = (session_id, plan_id, old.version) in self._reopened
        if old.status not in OPEN and not (reopened and old.status == PlanStatus.APPROVED):
            raise PlanClosedError(plan_id, old.version, old.status, "modified")
        if isinstance(document, dict):
            document = {**document, "id": plan_id}  # a revision keeps the plan's id
        checked = self.check(session_id, document)
        plan = self._new(
            session_id,
            checked,
            version=old.version + 1,
            status=PlanStatus.AWAITING_APPROVAL,
            source=source,
            supersedes=old.version,
            feedback=feedback,
        )
        await self._book.add(plan, superseded_status=PlanStatus.SUPERSEDED)
        self._reopened.discard((session_id, plan_id, old.version))
        self._changed(replace(plan, status=PlanStatus.SUPERSEDED, version=old.version), old.status)
        self._changed(plan, None)
        return plan

    # -- deciding ------------------------------------------------------------------
    async def review(
        self, session_id: str, plan_id: str, *, explanation: str = ""
    ) -> ReviewOutcome:
        """Show the plan's newest version for approval and act on the answer."""
        plan = await self.latest(session_id, plan_id)
        if plan.status not in OPEN:
            raise PlanClosedError(plan_id, plan.version, plan.status, "reviewed")
        if self._assume_yes():
            return ReviewOutcome(await self.approve(session_id, plan_id, by="yes"), "approved")
        plan = await self._awaiting(plan)
        if not self._questions.answered_here:
            return ReviewOutcome(plan, "unattended")
        question = review_question(
            plan.document, version=plan.version, status=plan.status, explanation=explanation
        )
        answer: ReviewAnswer = parse_answer(await self._questions.ask(question, session_id))
        if answer.kind == "approve":
            return ReviewOutcome(await self.approve(session_id, plan_id, by="user"), "approved")
        return ReviewOutcome(await self.latest(session_id, plan_id), answer.kind, answer.text)

    async def approve(self, session_id: str, plan_id: str, *, by: str) -> StoredPlan:
        """Mark the newest version approved and publish :class:`PlanApproved` (once)."""
        plan = await self.latest(session_id, plan_id)
        if plan.status == PlanStatus.APPROVED:
            return plan  # approved already (by /plan while the review was open)
        moved = await self._move(plan, PlanStatus.APPROVED, by, "approved")
        self._answer_pending(session_id, plan_id, "approve")
        self._publish(
            PlanApproved(
                session_id=session_id,
                plan_id=plan_id,
                version=moved.version,
                document=moved.document,
                by=by,
            )
        )
        return moved

    async def reject(self, session_id: str, plan_id: str, *, by: str) -> StoredPlan:
        """Mark the newest version rejected; a review still open for it is closed."""
        plan = await self.latest(session_id, plan_id)
        moved = await self._move(plan, PlanStatus.REJECTED, by, "rejected")
        self._answer_pending(session_id, plan_id, None)
        return moved

    # -- helpers -------------------------------------------------------------------
    async def _awaiting(self, plan: StoredPlan) -> StoredPlan:
        if plan.status == PlanStatus.AWAITING_APPROVAL:
            return plan
        return await self._move(plan, PlanStatus.AWAITING_APPROVAL, None, "reviewed")

    async def _move(
        self, plan: StoredPlan, status: PlanStatus, by: str | None, wanted: str
    ) -> StoredPlan:
        if plan.status not in OPEN:
            raise PlanClosedError(plan.plan_id, plan.version, plan.status, wanted)
        at = utc_now().isoformat()
        if not await self._book.move(plan, status, expected=OPEN, at=at, decided_by=by):
            now = await self.latest(plan.session_id, plan.plan_id)  # decided meanwhile
            if now.status == status:
                return now
            raise PlanClosedError(now.plan_id, now.version, now.status, wanted)
        moved = replace(plan, status=status.value, updated_at=at, decided_by=by)
        self._changed(moved, plan.status)
        return moved

    def _answer_pending(self, session_id: str, plan_id: str, value: str | None) -> None:
        for asked in self._questions.pending(session_id):
            review = asked.question.plan
            if review is not None and review.plan_id == plan_id:
                self._questions.answer(asked.question_id, value)

    def _changed(self, plan: StoredPlan, old_status: str | None) -> None:
        self._publish(
            PlanChanged(
                session_id=plan.session_id,
                plan_id=plan.plan_id,
                version=plan.version,
                status=plan.status,
                old_status=old_status,
                supersedes=plan.supersedes,
            )
        )

    @staticmethod
    def _new(
        session_id: str,
        checked: ValidatedPlan,
        *,
        version: int,
        status: PlanStatus,
        source: str,
        supersedes: int | None = None,
        feedback: str = "",
    ) -> StoredPlan:
        now = utc_now().isoformat()
        document: dict[str, Any] = checked.document()
        return StoredPlan(
            session_id=session_id,
            plan_id=checked.id,
            version=version,
            status=status.value,
            document=document,
            source=source,
            created_at=now,
            updated_at=now,
            supersedes=supersedes,
            feedback=feedback,
        )
