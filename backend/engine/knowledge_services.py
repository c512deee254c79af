"""The knowledge services an engine runs, and how they hear of each other.

The Librarian's code indexes (one per workspace, following file edits), the
Archivalist's chronicle, the Academic's fragment library and tool discovery.
File change batches reach tool discovery; index progress becomes an engine
event; the knowledge desk answers what needs no model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from backend.agents.knowledge_desk import KnowledgeDesk, Question
from backend.archive.store import Archive
from backend.config.settings import SylkConfig
from backend.events import EventStream, IndexProgress
from backend.guide.routing.decision import ArchivalistIntent
from backend.guide.routing.patterns import classify
from backend.knowledge.chronicle.answer import answer_history
from backend.knowledge.chronicle.chronicle import Chronicle
from backend.knowledge.chronicle.record import record_statement
from backend.knowledge.code.hub import CodeKnowledgeHub
from backend.knowledge.fragments.answers import answer_best_practice
from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.tool_discovery.discovery import ToolDiscovery
from backend.knowledge.watch.watcher import ChangeBatch
from backend.llm.offline import how_to_configure
from backend.redaction import Redactor
from backend.skills.builtin.catalog import KnowledgeWiring

if TYPE_CHECKING:
    from backend.knowledge.code.live import CodeKnowledge, IndexStatus


class KnowledgeServices:
    def __init__(
        self,
        *,
        data_dir: Path,
        settings: SylkConfig,
        archive: Archive,
        redactor: Redactor,
        events: EventStream,
        watch: bool = True,
    ) -> None:
        self._settings = settings
        self._events = events
        # The sessions a cross-session answer may draw on (the user's own, on a shared
        # archive: ``TeamReach.user_sessions``); None: every session.
        self.cross_reach: Callable[[], tuple[str, ...]] | None = None
        self.chronicle = Chronicle(archive, redactor=redactor)
        self.tools = ToolDiscovery(archive)
        self.code = CodeKnowledgeHub(
            data_dir, on_status=self._on_index_status, on_changes=self._on_changes, watch=watch
        )
        self.library = FragmentLibrary(settings.library_folders(), watch=watch)
        self.desk = KnowledgeDesk(
            self.code,
            no_model_hint=self.no_model_hint,
            history=self._history_answer,
            library=self._library_answer,
        )

    def wiring(self) -> KnowledgeWiring:
        return KnowledgeWiring(
            code=self.code,
            chronicle=self.chronicle,
            library=self.library,
            tools=self.tools,
            consult=self.consult,
        )

    async def consult(
        self,
        agent: str,
        session_id: str,
        workspace: Path,
        question: str,
        cross_session: bool = False,
    ) -> str | None:
        """``agent``'s answer to another agent's question, from its stores alone.

        The question is classified as the Guide would classify it; its intent is
        used only when the Guide would send it to this very agent (a Librarian
        asked a history question answers it as a general code question).
        """
        seen = classify(question)
        own = seen.target.value == agent
        q = Question(
            session_id=session_id,
            workspace=workspace,
            text=question,
            intent=seen.intent if own else None,
            subject=seen.subject,
            time_scope=seen.time_scope if own else None,
            cross_session=cross_session,
        )
        return await self.desk.answer(agent, q, offline=True)

    def cache_stats(self, workspace: Path) -> dict[str, dict[str, dict[str, float | int]]]:
        """Per-intent cache figures: the Librarian's for ``workspace``, the Archivalist's."""
        code = self.code.peek(workspace)
        return {
            "librarian": code.cache.stats() if code is not None else {},
            "archivalist": self.chronicle.cache.stats(),
        }

    async def index(self, workspace: Path) -> CodeKnowledge:
        """The workspace's code knowledge; its first build runs in the background."""
        return await self.code.get(workspace)

    async def aclose(self) -> None:
        await self.code.aclose()
        await asyncio.to_thread(self.library.close)

    def no_model_hint(self) -> str:
        return how_to_configure(self._settings.source)

    def _reach(self, q: Question) -> tuple[str, ...] | None:
        if not q.cross_session:
            return (q.session_id,)
        if self.cross_reach is None:
            return None
        return tuple({*self.cross_reach(), q.session_id})  # never () (every session)

    async def _history_answer(self, q: Question) -> str:
        if q.intent == ArchivalistIntent.RECORD:
            return await record_statement(self.chronicle, q.session_id, q.text, q.subject)
        return await answer_history(
            self.chronicle,
            text=q.text,
            intent=q.intent,
            subject=q.subject,
            time_scope=q.time_scope,
            session_id=q.session_id,
            reach=self._reach(q),
        )

    async def _library_answer(self, q: Question) -> str:
        return await asyncio.to_thread(
            answer_best_practice,
            self.library,
            q.text,
            q.subject,
            no_model_hint=self.no_model_hint(),
        )

    def _on_changes(self, root: Path, batch: ChangeBatch) -> None:
        """Tool discovery read this workspace's config files: drop what changed."""
        if batch.bulk:
            self.tools.clear()
        else:
            self.tools.invalidate(batch.paths, root)

    def _on_index_status(self, status: IndexStatus) -> None:
        self._events.publish(
            IndexProgress(
                workspace=status.workspace,
                phase=status.phase,
                done=status.done,
                total=status.total,
                changed=status.changed,
                seconds=status.seconds,
                error=status.error,
            )
        )
