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
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from backend.agents.turns import session_brief
from backend.errors import SylkError
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.models import Category
from backend.sessions.models import FileRecord, Session, SessionContext
from backend.skills.hooks.agents import Consultation
from backend.skills.hooks.builtin import FileTouch

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


__all__ = ["HookWork"]
