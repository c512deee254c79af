"""An engine's parts (:class:`EngineParts`), which :func:`backend.engine.build.build` makes.

The :class:`~backend.engine.Engine` facade works through them; tests that need one part
(the gateway, the archive, the guide) take it from here. ``status_text`` is ``/status``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from backend.agents.answering import AnswerPipeline
from backend.agents.dispatch import AgentDispatcher
from backend.agents.librarian_cache import LibrarianAnswers
from backend.agents.turns import TurnRunner
from backend.approvals.user_commands import ApprovalCommands
from backend.archive.store import Archive
from backend.budgets import BudgetGuard
from backend.checkpoints.service import Checkpoints
from backend.config.settings import SylkConfig
from backend.engine.config import EngineConfig
from backend.engine.hook_work import HookWork
from backend.engine.knowledge_services import KnowledgeServices
from backend.engine.model_work import status_models
from backend.engine.plan_runs.dag_work import DagWork
from backend.engine.session_service import SessionService
from backend.engine.worker_lanes import worker_block
from backend.engine.worktree_work import WorktreeWork
from backend.events import EventStream
from backend.guide.guide import Guide
from backend.guide.status import (
    cache_lines,
    describe_sessions,
    render_status,
)
from backend.llm.accounting import summarise
from backend.mcp.client.as_skills import attach_skills
from backend.mcp.client.hub import McpHub
from backend.orchestration import WorkerPool
from backend.plans.desk import PlanDesk
from backend.questions import QuestionBoard
from backend.redaction import Redactor
from backend.resources.resource_manager import ResourceManager
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.read_guard import ReadGuard
from backend.skills.search.embedding import describe_search
from backend.team.phase_talk import PhaseTalk


@dataclass
class ToolServers:
    """The configured MCP servers, started once; their tools join as hidden ops
    (and again after a server restarts)."""

    hub: McpHub
    gateway: Gateway
    started: bool = False

    async def start(self) -> None:
        if self.started:
            return
        self.started = True
        await self.hub.start()
        attach_skills(self.hub, self.gateway.registry)


@dataclass
class EngineParts:
    config: EngineConfig
    settings: SylkConfig
    redactor: Redactor
    archive: Archive
    events: EventStream
    knowledge: KnowledgeServices
    sessions: SessionService
    worktrees: WorktreeWork  # each session's git worktree and branch
    hook_work: HookWork
    gateway: Gateway
    read_guard: ReadGuard
    librarian_answers: LibrarianAnswers
    mcp: McpHub
    tool_servers: ToolServers
    turns: TurnRunner
    guide: Guide
    dispatcher: AgentDispatcher
    questions: QuestionBoard
    answers: AnswerPipeline
    checkpoints: Checkpoints
    approvals: ApprovalCommands
    plans: PlanDesk
    dags: DagWork
    resources: ResourceManager  # file locks and conflict warnings between sessions
    workers: WorkerPool  # one bound on every session's work (backend.engine.worker_lanes)
    talk: PhaseTalk | None = None  # set by install_team: plan talk by phase
    budgets: BudgetGuard | None = None  # set by install_budgets: the check before calls
    closed: bool = field(default=False)

    async def aclose(self) -> None:
        """Close every part, the archive (under the session lock) and the stream last."""
        if self.closed:
            return
        self.closed = True
        self.questions.withdraw_all()
        stage = self.gateway.index.embedding
        if stage is not None:  # its warm-up must not outlive the engine (seconds of CPU)
            await asyncio.to_thread(stage.close)
        await self.dags.aclose()  # runs stop here and resume at the next start
        await self.hook_work.aclose()
        await self.dispatcher.aclose()
        await self.guide.aclose()
        await self.turns.aclose()
        await self.mcp.aclose()
        await self.knowledge.aclose()
        await self.sessions.close_archive()
        self.events.close()

    def status_text(self, session_id: str) -> str:
        """``/status`` for ``session_id``."""
        workspace = Path(self.sessions.get(session_id).workspace)
        text = render_status(
            self.guide,
            session_id,
            self.describe_sessions(),
            summarise(session_id, self.archive.usage_by_agent(session_id)),
            status_models(self.turns, self.sessions.get(session_id)),
            search_line=describe_search(
                self.gateway.index.embedding, self.settings.search.semantic
            ),
            caches=cache_lines(self.knowledge.cache_stats(workspace)),
            approvals=self.approvals.status_lines(session_id),
            phase=self.sessions.get(session_id).phase,
            mcp_servers=self.mcp.status_lines(),
        ) + self.resources.status_block(session_id)
        return text + worker_block(self.workers, session_id)

    def describe_sessions(self) -> str:
        return describe_sessions(self.sessions.list_sessions(), self.sessions.active_id)
