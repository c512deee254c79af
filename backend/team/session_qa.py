"""Session QA after a plan, and the fix loop.

When a plan's DAG passes (:meth:`after_plan`) the phase is inspection: QA inspects every
file the session changed with the project's own tools (:mod:`backend.team.qa_checks`),
then testing runs the whole test suite, both in the session's sandbox. Clean: the phase
is complete and the Architect's summary recorded (:mod:`backend.team.completion`).
Findings: a fix plan (:mod:`backend.team.fix_plans`) for the user; its DAG runs, then QA
again. After ``max_rounds`` fix plans the user is asked for another round (nobody: stop).
A rejected fix plan, a failed fix DAG or ``/qa stop``: back to planning, findings listed.

``/qa`` steers it (:mod:`backend.team.qa_commands`, through the steps below). A pass in flight
when Sylk stopped resumes at its step (:meth:`SessionQa.resume`, by ``resume_dags``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from backend.checkpoints.service import Checkpoints
from backend.errors import SylkError
from backend.events import DagStatusChanged, EngineEvent, PlanChanged
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.messages import Message
from backend.plans.desk import PlanDesk
from backend.plans.review import PlanStatus
from backend.questions import QuestionBoard
from backend.sessions.models import Session
from backend.sessions.phases import SessionPhase
from backend.team.completion import build_summary, record_completion
from backend.team.fix_plans import FixPlanner, fix_plan_id
from backend.team.qa_checks import (
    METADATA_KEY,
    Finding,
    QaChecks,
    QaRecord,
    changed_files,
    inspection_findings,
    listing,
    round_question,
    test_counts,
    test_findings,
    tool_lines,
)
from backend.team.qa_commands import ENDED, QaCommands, qa_line

log = logging.getLogger(__name__)
MAX_FIX_ROUNDS = 3


class SessionAccess(Protocol):
    def get(self, session_id: str) -> Session: ...
    async def set_phase(self, ref: str, phase: SessionPhase, reason: str) -> Session: ...
    async def set_metadata(self, ref: str, key: str, value: Any) -> Session: ...
    async def notice(self, session_id: str, text: str, **extra: Any) -> Message[dict[str, Any]]: ...
    async def append(self, message: Message[dict[str, Any]]) -> Message[dict[str, Any]]: ...


class DagAccess(Protocol):
    async def wait(self, session_id: str, plan_id: str) -> object: ...


class SessionQa:
    def __init__(
        self,
        *,
        sessions: SessionAccess,
        checkpoints: Checkpoints,
        checks: QaChecks,
        planner: FixPlanner,
        desk: PlanDesk,
        chronicle: Chronicle,
        questions: QuestionBoard,
        add_listener: Callable[[Callable[[EngineEvent], None]], Callable[[], None]],
        dags: DagAccess,
        pipeline_notes: Callable[[str, list[str]], list[str]] = lambda _sid, _plans: [],
        max_rounds: int = MAX_FIX_ROUNDS,
    ) -> None:
        self._sessions = sessions
        self._checkpoints = checkpoints
        self._checks = checks
        self._planner = planner
        self._desk = desk
        self._chronicle = chronicle
        self._questions = questions
        self._dags = dags
        self._pipeline_notes = pipeline_notes
        self.max_rounds = max_rounds
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._others: set[asyncio.Task[None]] = set()
        self._next: dict[str, dict[str, bool]] = {}  # /qa flags given before QA runs
        self._closed = False
        self._commands = QaCommands(self, desk, sessions)
        self._detach = add_listener(self._on_event)

    # -- starting ----------------------------------------------------------------------
    def after_plan(self, session_id: str, plan_id: str) -> None:
        """The plan's DAG passed (its phase is inspection): QA runs, in a task."""
        if not self._closed:
            self._start(session_id, self._run(session_id, plan_id), f"qa-{plan_id}")

    def resume(self, session_id: str) -> bool:
        """A QA pass Sylk stopped mid-way (stage inspecting or testing): run from there."""
        record = self.record(session_id)
        if not self._closed and session_id not in self._tasks and record is not None:
            if record.stage == "inspecting":
                self._start(session_id, self._run(session_id, record.plan_id, record), "qa-resume")
            elif record.stage == "testing":
                self._start(session_id, self._test_and_complete(session_id, record), "qa-resume")
        return session_id in self._tasks

    def _start(self, session_id: str, work: Awaitable[None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(self._guarded(session_id, work), name=name)
        self._tasks[session_id] = task
        task.add_done_callback(lambda t: self._tasks.pop(session_id, None)
                               if self._tasks.get(session_id) is t else None)  # fmt: skip

    async def _guarded(self, session_id: str, work: Awaitable[None]) -> None:
        try:
            await work
        except SylkError as exc:
            await self.stop(session_id, f"session QA stopped: {exc}", error=type(exc).__name__)
        except Exception as exc:  # a broken tool runner or store: said, never a traceback
            log.exception("session %s: QA broke", session_id)
            await self.stop(session_id, f"session QA broke: {type(exc).__name__}: {exc}")

    def record(self, session_id: str) -> QaRecord | None:
        """The session's QA record (kept in its metadata), if QA ever ran there."""
        raw = self._sessions.get(session_id).metadata.get(METADATA_KEY)
        return QaRecord.model_validate(raw) if isinstance(raw, dict) else None

    async def save(self, session_id: str, record: QaRecord) -> None:
        await self._sessions.set_metadata(session_id, METADATA_KEY, record.model_dump(mode="json"))

    async def _say(self, session_id: str, text: str, stage: str, **extra: Any) -> None:
        await self._sessions.notice(session_id, text, qa=stage, **extra)

    async def _move(self, session_id: str, phase: SessionPhase, reason: str) -> None:
        if self._sessions.get(session_id).phase is phase:
            return
        try:
            await self._sessions.set_phase(session_id, phase, reason)
        except SylkError as exc:  # moved by hand meanwhile: say so, go on
            await self._say(session_id, f"Phase not moved to {phase.value}: {exc}", "phase")

    # -- the QA pass ---------------------------------------------------------------------
    async def _run(self, session_id: str, plan_id: str, again: QaRecord | None = None) -> None:
        before = again or self.record(session_id)
        if again is not None:
            record = again
        elif before is not None and before.fix_plan == plan_id and before.stage not in ENDED:
            record = before.model_copy(update={"fix_plan": None})  # a fix plan passed
        else:
            flags = self._next.pop(session_id, {})
            record = QaRecord(plan_id=plan_id, plans=[plan_id],
                              skip_tests=flags.get("skip_tests", False),
                              override_next=flags.get("override", False))  # fmt: skip
        await self._move(session_id, SessionPhase.INSPECTION, f"plan {plan_id} passed: session QA")
        workspace = Path(self._sessions.get(session_id).workspace)
        created, modified, _ = changed_files(await self._checkpoints.diff(session_id, workspace))
        record.stage, record.inspected, record.findings = "inspecting", created + modified, []
        await self.save(session_id, record)
        count = len(record.inspected)
        await self._say(session_id, f"Session QA after plan {plan_id}: inspecting the {count} "
                        "file(s) this session changed", "inspecting")  # fmt: skip
        found: list[Finding] = []
        if record.inspected:
            report = await self._checks.inspect(session_id, workspace, record.inspected)
            record.tools, found = tool_lines(report), inspection_findings(report)
            for run in report.failed_runs:
                await self._say(session_id, f"QA: {run.tool} {run.status.value}: "
                                f"{run.detail[:200]}", "inspecting", level="warning")  # fmt: skip
        if found and record.override_next:
            record.overridden, found, record.override_next = [*record.overridden, *found], [], False
        if found:
            await self._fix(session_id, record, found)
            return
        await self._test_and_complete(session_id, record)

    async def _test_and_complete(self, session_id: str, record: QaRecord) -> None:
        why = " (findings overridden)" if record.overridden else ""
        await self._move(session_id, SessionPhase.TESTING, f"plan {record.plan_id}: inspection "
                         f"passed{why}")  # fmt: skip
        if record.skip_tests:
            await self._say(session_id, "QA: tests skipped (/qa skip-tests)", "testing")
        else:
            record.stage = "testing"
            await self.save(session_id, record)
            await self._say(session_id, "Session QA: running the whole test suite", "testing")
            workspace = Path(self._sessions.get(session_id).workspace)
            report = await self._checks.test(session_id, workspace)
            record.tests = test_counts(report)
            failures = test_findings(report)
            if failures:
                await self._fix(session_id, record, failures)
                return
        await self._complete(session_id, record)

    async def _complete(self, session_id: str, record: QaRecord) -> None:
        await self._move(session_id, SessionPhase.TESTING, "session QA: on to completion")
        workspace = Path(self._sessions.get(session_id).workspace)
        diff = await self._checkpoints.diff(session_id, workspace)
        summary = build_summary(record, diff, self._pipeline_notes(session_id, record.plans))
        await self._move(session_id, SessionPhase.COMPLETE, f"plan {record.plan_id}: session "
                         "QA passed")  # fmt: skip
        promoted = await record_completion(session_id, summary, transcript=self._sessions,
                                           chronicle=self._chronicle, desk=self._desk)  # fmt: skip
        record.summary = summary | {"promoted": len(promoted)}
        record.stage, record.findings = "complete", []
        await self.save(session_id, record)

    # -- the fix loop --------------------------------------------------------------------
    async def _fix(self, session_id: str, record: QaRecord, findings: list[Finding]) -> None:
        record.findings = findings
        what = "test failure(s)" if findings[0].kind == "failure" else "inspection finding(s)"
        await self._say(session_id, f"Session QA found {len(findings)} {what}:\n"
                        f"{listing(findings)}", "findings", level="warning")  # fmt: skip
        again = record.rounds < self.max_rounds or await self._questions.ask(
            round_question(record), session_id) == "again"  # fmt: skip
        if not again:
            record.stage = "awaiting_fix"  # so _stop lists the findings
            await self.save(session_id, record)
            await self.stop(session_id, f"Session QA still fails after {record.rounds} fix "
                             "rounds: stopped; back to planning")  # fmt: skip
            return
        record.rounds += 1
        taken = {p.plan_id for p in await self._desk.plans(session_id)}
        plan_id, n = fix_plan_id(record.plan_id, record.rounds), record.rounds
        while plan_id in taken:
            n += 1
            plan_id = fix_plan_id(record.plan_id, n)
        record.stage, record.fix_plan = "awaiting_fix", plan_id
        record.plans.append(plan_id)  # before its DAG can pass: that QA pass continues this one
        await self.save(session_id, record)
        made = await self._planner.create(session_id, findings, plan_id=plan_id,
                                          root_plan=record.plan_id)  # fmt: skip
        current = self.record(session_id)  # /qa may have acted while the Architect wrote
        if current is None or current.fix_plan != plan_id:
            return
        record.fix_plan = record.plans[-1] = made.plan.plan_id  # the Architect may rename it
        await self.save(session_id, record)
        if made.plan.status == PlanStatus.APPROVED:
            await self._say(session_id, f"Fix plan {made.plan.plan_id} approved: it runs, then "
                            "QA checks again", "fixing")  # fmt: skip
            await self._dags.wait(session_id, made.plan.plan_id)
            return
        await self._say(session_id, f"Fix plan {made.plan.plan_id} waits for your approval: "
                        f"/plan approve {made.plan.plan_id} (or /plan reject, /qa override, "
                        "/qa skip-tests, /qa stop)", "awaiting_fix")  # fmt: skip

    async def stop(self, session_id: str, text: str, **extra: Any) -> None:
        """QA ends here: the findings listed, the phase back to planning."""
        record = self.record(session_id)
        if record is not None and record.stage not in ENDED:
            if record.findings:
                text += "\nOutstanding:\n" + listing(record.findings)
            record.stage, record.fix_plan = "stopped", None
            await self.save(session_id, record)
        await self._say(session_id, text, "stopped", level="warning", **extra)
        await self._move(session_id, SessionPhase.PLANNING, text.splitlines()[0][:200])

    def _on_event(self, event: EngineEvent) -> None:
        """A fix plan rejected, or its DAG failed: QA stops (in a task: listeners are sync)."""
        sid = event.session_id
        if self._closed or sid is None:
            return
        if isinstance(event, PlanChanged) and event.status == PlanStatus.REJECTED:
            why = f"Fix plan {event.plan_id} was rejected: back to planning"
        elif (isinstance(event, DagStatusChanged) and event.node_id is None
              and event.status in ("failed", "cancelled")):  # fmt: skip
            why = f"Fix plan {event.plan_id}'s DAG {event.status}: back to planning"
        else:
            return
        try:
            record = self.record(sid)
        except SylkError:
            return
        if record is None or record.fix_plan != event.plan_id or record.stage in ENDED:
            return
        task = asyncio.get_running_loop().create_task(self.stop(sid, why), name=f"qa-stop-{sid}")
        self._others.add(task)
        task.add_done_callback(self._others.discard)

    # -- what /qa does to it (backend.team.qa_commands) -----------------------------------
    async def command(self, session_id: str, action: str) -> str:
        """``/qa ACTION``: the answer for the user."""
        return await self._commands.command(session_id, action)

    def is_running(self, session_id: str) -> bool:
        return session_id in self._tasks

    def queue_flag(self, session_id: str, flag: str) -> None:
        self._next.setdefault(session_id, {})[flag] = True  # for the next QA run

    async def halt_work(self, session_id: str) -> None:
        """Cancel QA's task for the session (not when /qa runs inside it)."""
        task = self._tasks.pop(session_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def start_inspection(self, session_id: str, plan_id: str, again: QaRecord | None) -> None:
        self._start(session_id, self._run(session_id, plan_id, again), "qa-again")

    def start_tests(self, session_id: str, record: QaRecord) -> None:
        self._start(session_id, self._test_and_complete(session_id, record), "qa-tests")

    def start_completion(self, session_id: str, record: QaRecord) -> None:
        self._start(session_id, self._complete(session_id, record), "qa-complete")

    # -- reading, waiting, closing ----------------------------------------------------------
    def status_line(self, session_id: str) -> str | None:
        """One line for ``/plan``: the last completion, or what QA waits for."""
        return qa_line(self.record(session_id))

    async def wait(self, session_id: str) -> QaRecord | None:
        """Until the session's QA (and the fix DAGs it waits on) is idle; its record."""
        while (task := self._tasks.get(session_id)) is not None or self._others:
            if task is not None:
                await asyncio.shield(task)
            else:
                await asyncio.gather(*self._others, return_exceptions=True)
        return self.record(session_id)

    async def aclose(self) -> None:
        self._closed = True
        self._detach()
        tasks = [*self._tasks.values(), *self._others]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
