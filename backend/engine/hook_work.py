"""What the seed's hooks record, done off the tool call that fired them.

Hooks run inside a tool call and must not hold it up: what they record (a file an
agent wrote, in the session's context and the chronicle; a consultation, on the
timeline) is written by tasks :class:`HookWork` owns. :meth:`HookWork.settle` waits
for them before a turn's answer is recorded, and :meth:`HookWork.aclose` before the
engine closes, so no record is lost. The session brief the pre-prompt hook injects
comes from here too.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from backend.agents.turns import session_brief
from backend.errors import SylkError
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category
from backend.redaction import Redactor
from backend.sessions.models import FileRecord, Session, SessionContext
from backend.skills.hooks import seed_hooks as seed
from backend.skills.hooks.agents import Consultation
from backend.skills.hooks.builtin import FileTouch
from backend.skills.hooks.registry import HookRegistry

UpdateContext = Callable[[str, Callable[[SessionContext], None]], Awaitable[None]]


class HookWork:
    """The providers and sinks behind the session-context, file-tracking and
    consultation-logging hooks."""

    def __init__(
        self,
        *,
        chronicle: Chronicle,
        session_of: Callable[[str], Session],
        update_context: UpdateContext,
    ) -> None:
        self._chronicle = chronicle
        self._session_of = session_of
        self._update_context = update_context
        self._background: set[asyncio.Task[Any]] = set()
        # What state_update and file_operation_tracking saw, per session (history_injection).
        self.recent: dict[str, deque[str]] = {}
        self.file_operations: dict[str, deque[seed.FileOperation]] = {}

    async def settle(self) -> None:
        """Wait for the records hooks started so far."""
        await asyncio.gather(*list(self._background), return_exceptions=True)

    async def aclose(self) -> None:
        await self.settle()

    # -- hook providers and sinks ----------------------------------------------------
    def session_brief(self, session_id: str) -> str | None:
        """Pre-prompt hook provider: the session's brief, or nothing for an unknown id."""
        try:
            return session_brief(self._session_of(session_id))
        except SylkError:
            return None

    def track_file(self, touch: FileTouch) -> None:
        """Post-tool hook: a write op touched a file; remember it in the session's context."""

        def note(ctx: SessionContext) -> None:
            files = ctx.created_files if touch.operation == "created" else ctx.modified_files
            files[touch.path] = FileRecord(path=touch.path, source=touch.op)

        chronicle = self._chronicle
        self._spawn(self._update_context(touch.session_id, note), "sylk-file-tracking")
        self._spawn(
            chronicle.record_file(touch.session_id, touch.path, touch.operation, agent=touch.agent),
            "sylk-file-tracking",
        )

    def log_consultation(self, asked: Consultation) -> None:
        """Post-tool hook: the Engineer consulted another agent; note it on the timeline."""
        found = "answered from its store" if asked.answered else "had nothing stored"
        entry = self._chronicle.store(
            asked.session_id,
            Category.TIMELINE,
            f"Consulted the {asked.consulted}: {asked.question} ({found})",
            title=f"consulted {asked.consulted}",
            agent=asked.agent,
            data={"consulted": asked.consulted, "answered": asked.answered},
        )
        self._spawn(entry, "sylk-consultation-log")

    def _spawn(self, job: Coroutine[Any, Any, Any] | Awaitable[Any], name: str) -> None:
        task = asyncio.ensure_future(job)
        task.set_name(name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- the seed's remaining hooks (backend.skills.hooks.seed_hooks) -------------------
    def recent_lines(self, session_id: str) -> list[str]:
        """history_injection's provider: the session's latest steps, newest last."""
        return list(self.recent.get(session_id, ()))

    def note_step(self, step: seed.StepDone) -> None:
        """state_update: the session's current step, in memory and its context."""
        line = f"{step.agent} ran {step.op}: {'ok' if step.ok else step.detail or 'failed'}"
        self.recent.setdefault(step.session_id, deque(maxlen=RECENT_KEPT)).append(line)

        def note(ctx: SessionContext) -> None:
            ctx.current_step = line

        self._spawn(self._update_context(step.session_id, note), "sylk-state-update")

    def note_file_operation(self, operation: seed.FileOperation) -> None:
        """file_operation_tracking: the Engineer starts a file op; a read is the session's
        read file at once (writes are recorded by file_tracking once they succeed)."""
        kept = self.file_operations.setdefault(operation.session_id, deque(maxlen=FILE_OPS_KEPT))
        kept.append(operation)
        if operation.op.endswith((".read", ".view")):

            def note(ctx: SessionContext) -> None:
                ctx.read_files[operation.path] = FileRecord(
                    path=operation.path, source=operation.op
                )

            self._spawn(self._update_context(operation.session_id, note), "sylk-file-ops")

    def record_pattern(self, found: seed.ExtractedPattern) -> None:
        """pattern_extraction: a pattern a response stated, recorded for the session."""
        job = self._chronicle.record_pattern(
            found.session_id, category="extracted", name=found.name, pattern=found.pattern,
            agent=found.agent,
        )  # fmt: skip
        self._spawn(job, "sylk-pattern-extraction")

    def promote_pattern(self, entry_id: str, reason: str) -> None:
        """pattern_promotion_check: a pattern used in several sessions goes global."""
        self._spawn(self._chronicle.promote(entry_id, reason=reason), "sylk-pattern-promotion")


RECENT_KEPT = 8  # steps history_injection shows
FILE_OPS_KEPT = 64  # file operations remembered per session


def install_seed_hooks(hooks: HookRegistry, work: HookWork, redactor: Redactor) -> None:
    """The seed's remaining hooks, on ``work``'s sinks (token_budget_check: budgets)."""
    hooks.install(seed.history_injection(work.recent_lines))
    hooks.install(seed.cross_session_query_handler())
    hooks.install(seed.response_logging(redactor=redactor))
    hooks.install(seed.pattern_extraction(work.record_pattern))
    hooks.install(seed.file_operation_tracking(work.note_file_operation))
    hooks.install(seed.state_update(work.note_step))
    hooks.install(seed.pattern_promotion_check(work.promote_pattern))


__all__ = ["HookWork", "install_seed_hooks"]
