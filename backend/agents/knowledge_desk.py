"""What the knowledge agents answer straight from their stores, without a model.

The Librarian answers LOCATE questions ("where is X defined") from the code
index whether or not a model is configured: file:line locations need no
synthesis. With no model configured, the Librarian, Archivalist and Academic
still answer from what they hold (code evidence, the chronicle, the fragment
library), each answer saying so. Anything else goes to the agent's model; the
Librarian model's answers are cached and reused by
:mod:`backend.agents.librarian_cache`, in the same cache as the index's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backend.knowledge.code.answers import render_evidence, render_locate
from backend.knowledge.code.evidence import Evidence

if TYPE_CHECKING:
    from backend.knowledge.code.hub import CodeKnowledgeHub
    from backend.knowledge.code.live import CodeKnowledge

# How long a question waits for a workspace's first index build before it is
# answered from what is indexed so far (the answer then says it may be incomplete).
READY_WAIT_S = 30.0

HistoryAnswer = Callable[["Question"], Awaitable[str | None]]
LibraryAnswer = Callable[["Question"], Awaitable[str | None]]


@dataclass(frozen=True)
class Question:
    session_id: str
    workspace: Path
    text: str
    intent: str | None = None
    subject: str | None = None
    time_scope: str | None = None
    # May the answer draw on other sessions' transcripts and files? The user asking
    # may; an agent or MCP client only with the cross-session scope.
    cross_session: bool = True


class KnowledgeDesk:
    def __init__(
        self,
        code: CodeKnowledgeHub,
        *,
        no_model_hint: Callable[[], str],
        history: HistoryAnswer | None = None,
        library: LibraryAnswer | None = None,
        ready_wait_s: float = READY_WAIT_S,
    ) -> None:
        self.code = code
        self.history = history
        self.library = library
        self._hint = no_model_hint
        self._ready_wait_s = ready_wait_s

    async def answer(self, role: str, question: Question, *, offline: bool) -> str | None:
        """The answer from the stores, or None when this question needs the agent's model."""
        if role == "librarian":
            return await self._librarian(question, offline=offline)
        # A statement to keep needs no synthesis: recording it never waits on a model.
        recording = role == "archivalist" and question.intent == "RECORD"
        if not offline and not recording:
            return None
        if role == "archivalist" and self.history is not None:
            return await self.history(question)
        if role == "academic" and self.library is not None:
            return await self.library(question)
        return None

    async def knowledge(self, workspace: Path) -> CodeKnowledge:
        knowledge = await self.code.get(workspace)
        if not knowledge.ready:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(knowledge.wait_ready(), self._ready_wait_s)
        return knowledge

    async def _librarian(self, q: Question, *, offline: bool) -> str | None:
        intent = (q.intent or "GENERAL").upper()
        subject = q.subject or q.text
        if intent == "LOCATE" and q.subject:
            knowledge = await self.knowledge(q.workspace)
            found = await knowledge.locate(q.subject, q.text)
            if found.definitions or offline:
                return render_locate(found)
            return None  # not a known symbol: the model may find it by reading
        if not offline:
            return None
        knowledge = await self.knowledge(q.workspace)
        evidence: Evidence
        if intent == "PATTERN":
            evidence = await knowledge.patterns(subject)
        elif intent == "EXPLAIN":
            evidence = await knowledge.explain(subject)
        else:
            evidence = await knowledge.general(q.text)
        return render_evidence(evidence, no_model=self._hint())
