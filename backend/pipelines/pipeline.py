"""One task's engineer -> inspector -> tester loop, as a state machine.

``created -> running`` (an engineer turn) ``-> inspecting`` (the discovered checks on
every file the pipeline touched so far) ``-> testing`` (the relevant tests) ``->
completed``. Issues or failures go back to the engineer as feedback (``running`` again,
one more loop; that event's detail names the check and its first finding) until
``max_loops`` engineer turns are spent; then the pipeline waits for the user
(``waiting_for_user``): "ignore" skips that stage from then on (inspection ignored: on
to the tests; tests ignored: completed) and leaves a note, "fail" ends it
``failed``. ``ignore_inspector`` / ``ignore_tester`` skip a stage from the next check on.

Feedback travels the pipeline's own bus (:mod:`backend.pipelines.bus`), inspector and
tester to the engineer, bypassing the Guide; before each turn the pipeline drains the
engineer's inbox into the context, so a user's ``/task ID prompt`` sent on the same bus
reaches the next turn too. The bus is closed when the pipeline ends.

Cancelling (:meth:`Pipeline.cancel`, or the task running :meth:`Pipeline.run` being
cancelled) ends the pipeline ``failed`` with reason ``"interrupted"``, as the seed says
of a user's cancellation; one state fewer for every reader. A running check's processes
are killed with it. A typed error of a collaborator ends it ``failed`` with the message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import ValidationError

from backend.errors import ErrorKind, SylkError
from backend.messages import MessageType
from backend.pipelines.bus import InMemoryPipelineBus, PipelineRole
from backend.pipelines.context import (
    INTERRUPTED,
    MAX_LOOPS,
    TERMINAL,
    EngineerResult,
    InspectorFeedback,
    PipelineContext,
    PipelineEvent,
    PipelineResult,
    PipelineState,
    TesterFeedback,
)
from backend.pipelines.feedback import (
    feedback_from_inspection,
    feedback_from_tests,
    first_finding,
)
from backend.pipelines.pipeline_checks import PipelineChecker

Decision = Literal["ignore", "fail"]
Engineer = Callable[[PipelineContext], Awaitable[EngineerResult]]
Decide = Callable[[PipelineContext, str], Awaitable[str]]
OnEvent = Callable[[PipelineEvent], None]


class PipelineError(SylkError):
    """The pipeline cannot do what was asked in its current state."""

    error_kind = ErrorKind.CONFLICT


class _Ended(Exception):
    """Control flow inside run(): how the loop ended; never escapes run()."""

    def __init__(self, state: PipelineState, reason: str) -> None:
        self.state = state
        self.reason = reason


class Pipeline:
    """Runs one task to completed or failed; see the module doc."""

    def __init__(
        self,
        context: PipelineContext,
        *,
        engineer: Engineer,
        checks: PipelineChecker,
        decide: Decide,
        on_event: OnEvent | None = None,
        bus: InMemoryPipelineBus | None = None,
        max_loops: int = MAX_LOOPS,
        ignore_inspector: bool = False,
        ignore_tester: bool = False,
    ) -> None:
        if max_loops < 1:
            raise PipelineError(f"max_loops must be at least 1, not {max_loops}")
        self.context = context
        self.bus = bus or InMemoryPipelineBus(f"pipeline-{context.task_id}", "pipeline")
        self.max_loops = max_loops
        self.ignore_inspector = ignore_inspector
        self.ignore_tester = ignore_tester
        self.state = PipelineState.CREATED
        self.reason = ""
        self._engineer = engineer
        self._checks = checks
        self._decide = decide
        self._on_event = on_event
        self._task: asyncio.Task[Any] | None = None
        self._cancel_requested = False
        self._sent_back = ""  # what sent the task back to its engineer: the next turn says

    @property
    def task_id(self) -> str:
        return self.context.task_id

    def cancel(self) -> bool:
        """Stop the run (the engine's ``/task ID interrupt``); False if nothing to stop."""
        if self.state in TERMINAL:
            return False
        self._cancel_requested = True
        if self._task is not None:
            self._task.cancel()
        return True

    async def run(self) -> PipelineResult:
        """Run to the end; a pipeline runs once."""
        if self.state is not PipelineState.CREATED:
            raise PipelineError(f"pipeline {self.task_id} already ran (state {self.state})")
        self._task = asyncio.current_task()
        outcome = _Ended(PipelineState.COMPLETED, "")
        try:
            if self._cancel_requested:
                raise asyncio.CancelledError
            await self._loop()
        except _Ended as ended:
            outcome = ended
        except asyncio.CancelledError:
            self._finish(PipelineState.FAILED, INTERRUPTED)
            if not self._cancel_requested and self._task is not None:
                raise  # someone else cancelled our task: let it go on unwinding
            if self._task is not None:
                self._task.uncancel()
            return self.result()
        except SylkError as error:
            outcome = _Ended(PipelineState.FAILED, error.message)
        except Exception as error:
            self._finish(PipelineState.FAILED, f"{type(error).__name__}: {error}")
            raise
        finally:
            self._task = None
        self._finish(outcome.state, outcome.reason)
        return self.result()

    def result(self) -> PipelineResult:
        return PipelineResult(
            task_id=self.task_id,
            state=self.state,
            success=self.state is PipelineState.COMPLETED,
            reason=self.reason,
            loops_used=self.context.loop,
            context=self.context,
        )

    # -- the loop --------------------------------------------------------------------
    async def _loop(self) -> None:
        while True:
            await self._engineer_turn()
            if not self.ignore_inspector and not await self._inspection_passed():
                continue
            if not self.ignore_tester and not await self._tests_passed():
                continue
            return

    async def _engineer_turn(self) -> None:
        self.context.loop += 1
        await self._drain_inbox()
        why, self._sent_back = self._sent_back, ""
        self._move(PipelineState.RUNNING, why or f"engineer turn {self.context.loop}")
        result = await self._engineer(self.context)
        self.context.add_files(result)
        self.context.engineer_texts.append(result.text)

    async def _inspection_passed(self) -> bool:
        files = self.context.modified_files + self.context.created_files
        self._move(PipelineState.INSPECTING, f"{len(files)} file(s)")
        feedback = feedback_from_inspection(await self._checks.inspect(files), self.context.loop)
        if feedback.passed:
            self.context.inspector_feedback.append(feedback)
            return True
        if await self._at_limit("inspector", feedback.text):
            self.context.inspector_feedback.append(feedback)
            self.ignore_inspector = True
            return True
        self._sent_back = f"the inspection failed: {first_finding(feedback)}"
        await self.bus.send_inspector_feedback(feedback.model_dump(mode="json"))
        return False

    async def _tests_passed(self) -> bool:
        files = self.context.modified_files + self.context.created_files
        self._move(PipelineState.TESTING, f"{len(files)} file(s)")
        feedback = feedback_from_tests(await self._checks.test(files), self.context.loop)
        if feedback.passed:
            self.context.tester_feedback.append(feedback)
            return True
        if await self._at_limit("tester", feedback.text):
            self.context.tester_feedback.append(feedback)
            self.ignore_tester = True
            return True
        self._sent_back = f"the tests failed: {first_finding(feedback)}"
        await self.bus.send_tester_feedback(feedback.model_dump(mode="json"))
        return False

    async def _at_limit(self, stage: str, text: str) -> bool:
        """Below the limit: False (loop again). At it: the user's call; True is "ignore"."""
        if self.context.loop < self.max_loops:
            return False
        reason = f"the {stage} still fails after {self.context.loop} loop(s):\n{text}"
        self._move(PipelineState.WAITING_FOR_USER, reason)
        decision = await self._decide(self.context, reason)
        if decision == "ignore":
            self.context.notes.append(
                f"{stage} failures ignored by the user at loop {self.context.loop}"
            )
            return True
        if decision == "fail":
            raise _Ended(PipelineState.FAILED, reason)
        raise _Ended(PipelineState.FAILED, f"no valid decision ({decision!r}) for: {reason}")

    async def _drain_inbox(self) -> None:
        """Feedback and user messages waiting for the engineer, into the context."""
        while self.bus.pending(PipelineRole.ENGINEER):
            message = await self.bus.receive(PipelineRole.ENGINEER)
            payload = message.payload
            try:
                if message.type is MessageType.INSPECTOR_FEEDBACK:
                    feedback = InspectorFeedback.model_validate(payload)
                    self.context.inspector_feedback.append(feedback)
                    continue
                if message.type is MessageType.TESTER_FEEDBACK:
                    self.context.tester_feedback.append(TesterFeedback.model_validate(payload))
                    continue
            except ValidationError:
                pass  # not feedback this pipeline wrote: the engineer reads it as a message
            text = payload.get("text", payload) if isinstance(payload, dict) else payload
            self.context.user_messages.append(str(text))

    # -- transitions -----------------------------------------------------------------
    def _move(self, state: PipelineState, detail: str = "") -> None:
        self.state = state
        if self._on_event is not None:
            self._on_event(
                PipelineEvent(
                    task_id=self.task_id, state=state, loop=self.context.loop, detail=detail
                )
            )

    def _finish(self, state: PipelineState, reason: str) -> None:
        self.reason = reason
        self.bus.close()
        self._move(state, reason or "; ".join(self.context.notes))
