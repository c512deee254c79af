"""``/qa [status|run|skip-tests|override|stop]``: the user steering the session's QA.

:class:`~backend.team.session_qa.SessionQa` runs QA's steps; this module decides what a
``/qa`` command does to them, against the QA record at that moment: ``override``
accepts the outstanding inspection findings (deferred in the summary; never test
failures), ``skip-tests`` skips the tests (said in the summary), either given before QA
applies to the next run; ``run`` runs QA again keeping its rounds and decisions; ``stop``
ends it, back to planning. An open fix plan is closed (rejected) before QA moves on
without it; one that is approved and running is waited for, never cut.
"""

from __future__ import annotations

from typing import Protocol

from backend.plans.desk import PlanDesk
from backend.plans.review import PlanStatus
from backend.sessions.models import Session
from backend.sessions.phases import SessionPhase
from backend.team.completion import record_status
from backend.team.completion import status_line as summary_line
from backend.team.qa_checks import ACTIONS, QaCommandError, QaRecord

ENDED = ("complete", "stopped")


class QaSteps(Protocol):
    """What ``/qa`` may do to the session's QA (:class:`~backend.team.session_qa.SessionQa`)."""

    max_rounds: int

    def record(self, session_id: str) -> QaRecord | None: ...
    def is_running(self, session_id: str) -> bool: ...
    async def save(self, session_id: str, record: QaRecord) -> None: ...
    async def stop(self, session_id: str, text: str) -> None: ...
    async def halt_work(self, session_id: str) -> None: ...
    def queue_flag(self, session_id: str, flag: str) -> None: ...
    def start_inspection(self, session_id: str, plan_id: str, again: QaRecord | None) -> None: ...
    def start_tests(self, session_id: str, record: QaRecord) -> None: ...
    def start_completion(self, session_id: str, record: QaRecord) -> None: ...


class SessionRead(Protocol):
    def get(self, session_id: str) -> Session: ...


class QaCommands:
    def __init__(self, steps: QaSteps, desk: PlanDesk, sessions: SessionRead) -> None:
        self._steps = steps
        self._desk = desk
        self._sessions = sessions

    async def command(self, session_id: str, action: str) -> str:
        """``/qa ACTION``: the answer for the user."""
        if action not in ACTIONS:
            raise QaCommandError(f"unknown /qa action {action!r}", "unknown_action")
        qa = self._steps
        record = qa.record(session_id)
        active = record is not None and record.stage not in ENDED
        if action == "status":
            if record is None:
                return "no session QA yet: it runs when a plan's DAG passes"
            return record_status(record, qa.max_rounds)
        if action == "run":
            return await self._rerun(session_id, record)
        if action == "stop":
            if record is None or not active:
                raise QaCommandError("no session QA is under way", "not_running")
            await self._halt(session_id, record)
            await qa.stop(session_id, "Session QA stopped by the user: back to planning")
            return "session QA stopped; the phase is planning"
        flag = "skip_tests" if action == "skip-tests" else "override"
        if record is None or not active:
            qa.queue_flag(session_id, flag)
            return f"{action}: applies to the next session QA"
        failing_tests = record.stage == "awaiting_fix" and record.findings[:1] != [] and (
            record.findings[0].kind == "failure")  # fmt: skip
        if flag == "skip_tests":
            record.skip_tests = True
            if not failing_tests:
                await qa.save(session_id, record)
                return "tests will be skipped in this session QA (the summary says so)"
            await self._halt(session_id, record)
            qa.start_completion(session_id, record)
            return "tests skipped: the failures are deferred; completing"
        if record.stage != "awaiting_fix" or failing_tests:
            if failing_tests:
                raise QaCommandError("test failures cannot be overridden", "tests_failing",
                                     "/qa skip-tests skips the tests instead")  # fmt: skip
            record.override_next = True
            await qa.save(session_id, record)
            return "override: inspection findings of this QA run will be accepted"
        await self._halt(session_id, record)
        record.overridden, record.findings = [*record.overridden, *record.findings], []
        qa.start_tests(session_id, record)
        return f"{len(record.overridden)} finding(s) overridden (listed as deferred); testing"

    async def _halt(self, session_id: str, record: QaRecord) -> None:
        """Stop QA's own work for the session and close its fix plan if still open."""
        fix = record.fix_plan
        plan = await self._desk.latest(session_id, fix) if fix is not None else None
        if plan is not None and plan.status == PlanStatus.APPROVED:
            raise QaCommandError(f"fix plan {fix} is approved and runs", "fix_running",
                                 "wait for it (QA checks again after it), /qa status")  # fmt: skip
        record.fix_plan = None
        record.plans = [p for p in record.plans if p != fix]  # closed unrun: not in the summary
        await self._steps.save(session_id, record)
        await self._steps.halt_work(session_id)
        if fix is not None and plan is not None and plan.status in (
            PlanStatus.AWAITING_APPROVAL, PlanStatus.DRAFT):  # fmt: skip
            await self._desk.reject(session_id, fix, by="qa")

    async def _rerun(self, session_id: str, record: QaRecord | None) -> str:
        if record is None:
            raise QaCommandError("no plan has passed in this session yet", "nothing_to_check")
        if self._steps.is_running(session_id):
            raise QaCommandError("session QA is running now", "running", "/qa status")
        phase = self._sessions.get(session_id).phase
        if phase not in (SessionPhase.INSPECTION, SessionPhase.TESTING):  # QA's own phases
            raise QaCommandError(f"the session is in {phase.value}: QA runs after a plan's "
                                 "DAG passes", "wrong_phase", "/plan, /qa status")  # fmt: skip
        again = None
        if record.stage not in ENDED:  # keep its rounds and decisions; close its fix plan
            await self._halt(session_id, record)
            again = record
        self._steps.start_inspection(session_id, record.plan_id, again)
        return f"session QA runs again for plan {record.plan_id}"


def qa_line(record: QaRecord | None) -> str | None:
    """One line for ``/plan``: the last completion, or what QA waits for."""
    if record is None:
        return None
    if record.stage == "complete" and record.summary:
        return summary_line(record.summary)
    return f"session QA of plan {record.plan_id}: {record.stage.replace('_', ' ')}" + (
        f" (fix plan {record.fix_plan})" if record.fix_plan else "")  # fmt: skip
