"""The engine's skill gateway: every built-in wired to the engine's services, the seed's
hooks installed, and the background work those hooks start.

Hooks run inside a tool call and must not hold it up: what they record (a file an
agent wrote in the session's context and the chronicle, a consultation on the
timeline) is written by tasks this class owns. :meth:`settle` waits for them before
a turn's answer is recorded, and :meth:`aclose` before the engine closes, so no
record is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from backend.agents.turns import session_brief
from backend.archive.store import Archive
from backend.engine.knowledge_parts import EngineKnowledge
from backend.errors import SylkError
from backend.knowledge.chronicle.models import Category
from backend.redaction import Redactor
from backend.sessions.models import FileRecord, Session, SessionContext
from backend.skills.builtin.catalog import build_gateway
from backend.skills.builtin.guide import GuideWiring
from backend.skills.builtin.sessions import session_skills
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.read_guard import install_read_guard
from backend.skills.hooks.agents import Consultation, consultation_logging
from backend.skills.hooks.builtin import (
    FileTouch,
    file_tracking,
    result_logging,
    session_context_injection,
)
from backend.skills.search.embedding import semantic_stage

log = logging.getLogger("sylk.tools")
UpdateContext = Callable[[str, Callable[[SessionContext], None]], Awaitable[None]]


class EngineSkills:
    def __init__(
        self,
        *,
        knowledge: EngineKnowledge,
        archive: Archive,
        redactor: Redactor,
        semantic: str,
        wiring: GuideWiring,
        session_of: Callable[[str], Session],
        update_context: UpdateContext,
    ) -> None:
        self._knowledge = knowledge
        self._session_of = session_of
        self._update_context = update_context
        self._background: set[asyncio.Task[Any]] = set()
        self.gateway: Gateway = build_gateway(
            knowledge=knowledge.wiring(), embedding=semantic_stage(semantic), wiring=wiring
        )
        self.gateway.registry.register_all(session_skills(archive))
        hooks = self.gateway.hooks
        hooks.install(session_context_injection(self._session_brief))
        hooks.install(file_tracking(self._track_file))
        hooks.install(consultation_logging(self._log_consultation))
        hooks.install(result_logging(log, redactor=redactor))
        # Edits and overwrites need a read of the file first (and a fresh one if it changed).
        self.read_guard = install_read_guard(self.gateway)

    async def settle(self) -> None:
        """Wait for the records hooks started so far."""
        await asyncio.gather(*list(self._background), return_exceptions=True)

    async def aclose(self) -> None:
        await self.settle()

    # -- hook side work --------------------------------------------------------------
    def _session_brief(self, session_id: str) -> str | None:
        """Pre-prompt hook provider: the session's brief, or nothing for an unknown id."""
        try:
            return session_brief(self._session_of(session_id))
        except SylkError:
            return None

    def _track_file(self, touch: FileTouch) -> None:
        """Post-tool hook: a write op touched a file; remember it in the session's context."""

        def note(ctx: SessionContext) -> None:
            files = ctx.created_files if touch.operation == "created" else ctx.modified_files
            files[touch.path] = FileRecord(path=touch.path, source=touch.op)

        chronicle = self._knowledge.chronicle
        self._spawn(self._update_context(touch.session_id, note), "sylk-file-tracking")
        self._spawn(
            chronicle.record_file(touch.session_id, touch.path, touch.operation, agent=touch.agent),
            "sylk-file-tracking",
        )

    def _log_consultation(self, asked: Consultation) -> None:
        """Post-tool hook: the Engineer consulted another agent; note it on the timeline."""
        found = "answered from its store" if asked.answered else "had nothing stored"
        entry = self._knowledge.chronicle.store(
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


__all__ = ["EngineSkills"]
