"""The engine: the one facade the front ends (TUI, CLI, MCP server) talk to.

- ``__init__`` (here): :class:`Engine`, the verbs front ends use and a few read
  accessors; it holds no service of its own and works through its parts.
- ``config``: :class:`EngineConfig`, where an engine keeps its data and the
  workspace it serves.
- ``build``: the composition root; :func:`~backend.engine.build.build` makes
  :class:`~backend.engine.build.EngineParts` and wires them to each other.
- ``session_service``: sessions and their transcripts, each change written to the
  archive before the event announcing it is published.
- ``knowledge_services``: the code indexes, the chronicle, the fragment library
  and tool discovery, and how they hear of each other.
- ``hook_work``: what the seed's hooks record, off the tool call that fired them.
- ``dag_work``: approved plans run as DAGs (``dag_nodes``: a node as an agent request;
  ``dag_notes``: their transcript notices).

Requests for agents are answered by :class:`backend.agents.answering.AnswerPipeline`;
the text of ``/status`` and ``/session list`` lives in :mod:`backend.guide.status`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.archive.plan_book import StoredPlan
from backend.archive.records import SessionRecords
from backend.checkpoints.records import SessionDiff, TurnRunningError, UndoOutcome
from backend.config.approvals import ApprovalMode
from backend.config.settings import SylkConfig
from backend.engine.budget_work import budget_verb
from backend.engine.build import EngineParts, build
from backend.engine.config import EngineConfig
from backend.engine.lifecycle.verbs import LifecycleVerbs
from backend.engine.model_work import check_spec, model_command
from backend.engine.plan_runs.pipeline_work import pipeline_desk
from backend.engine.plan_runs.plan_work import plan_command
from backend.engine.status_facts import StatusFacts, status_facts
from backend.engine.team_work import session_qa
from backend.engine.worker_lanes import user_job
from backend.engine.worktree_work import WorktreeVerbs
from backend.errors import CommandError, SessionNotActiveError, SylkError
from backend.events import EventStream, QuestionAsked
from backend.guide.commands import run_command
from backend.guide.routing.decision import AGENT_TARGETS, RouteDecision
from backend.knowledge.fragments.library import FragmentLibrary
from backend.knowledge.tool_discovery.command import tools_answer
from backend.llm.accounting import UsageSummary, summarise
from backend.mcp.client.server_ops import mcp_command
from backend.messages import Message
from backend.orchestration import DagOutcome
from backend.redaction import Redactor
from backend.sessions.models import Session, SessionContext, SessionState
from backend.sessions.naming import SessionBusyError
from backend.sessions.phases import PhaseChange, SessionPhase, parse_phase
from backend.skills.gateway.gateway import Gateway
from backend.team.qa_checks import QaRecord
from backend.workspace.confinement import Confinement

if TYPE_CHECKING:
    from backend.knowledge.code.live import CodeKnowledge

Transcript = list[Message[dict[str, Any]]]

__all__ = ["Engine", "EngineConfig", "EngineParts", "Transcript"]


class Engine(LifecycleVerbs, WorktreeVerbs):
    """``events`` is the one public stream: every change, after it is committed; fail,
    close, stats, snapshots and the idle timer come from ``lifecycle.LifecycleVerbs``;
    create_session and merge_session from ``worktree_work.WorktreeVerbs``."""

    def __init__(
        self,
        config: EngineConfig,
        settings: SylkConfig | None = None,
        *,
        parts: EngineParts | None = None,
    ) -> None:
        self._parts = parts if parts is not None else build(config, settings)
        self._sessions = self._parts.sessions
        self.events: EventStream = self._parts.events
        self._fail_on_broken_dags()

    @classmethod
    def from_parts(cls, parts: EngineParts) -> Engine:
        """An engine over parts built (and perhaps inspected) by the caller."""
        return cls(parts.config, parts=parts)

    # -- lifecycle -----------------------------------------------------------
    async def aclose(self) -> None:
        await self._close_lifecycle()
        await self._parts.aclose()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def start_tools(self) -> None:
        """Start the configured MCP servers once and register their tools as hidden ops."""
        await self._parts.tool_servers.start()

    async def wait_tools_started(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for the configured MCP servers to be up or down
        (their tools listed); True when none is still starting."""
        return await self._parts.mcp.wait_started(timeout_s)

    async def mcp_command(self, _session_id: str, args: dict[str, str]) -> str:
        """``/mcp``: the MCP servers' health; enable, disable or re-list one (see
        :func:`backend.mcp.client.server_ops.mcp_command`). Starts them first, as a turn would."""
        await self.start_tools()
        return await mcp_command(self._parts.mcp, args)

    def tool_servers_note(self) -> str:
        """The configured MCP servers not up, for a model: still starting, or down and why
        ('' when all are up); ``/status`` lists every one."""
        return self._parts.mcp.health_note()

    async def start_indexing(self, session_id: str | None = None) -> CodeKnowledge:
        """Index the session's workspace (the active one's by default) in the background."""
        session = self._sessions.get(session_id) if session_id else self.active_session()
        workspace = Path(session.workspace) if session else self.workspace
        return await self._parts.knowledge.index(workspace)

    budget_command = budget_verb  # /budget: show, set or lift limits (budget_work)

    # -- read accessors --------------------------------------------------------
    @property
    def workspace(self) -> Path:
        """The workspace new sessions work in."""
        return self._parts.config.workspace

    def confinement(self, workspace: Path | None = None) -> Confinement:
        """What agents working in ``workspace`` never touch (Sylk's own dirs)."""
        return self._parts.config.confinement(workspace)

    @property
    def redactor(self) -> Redactor:
        """What keeps configured secrets out of logs and records."""
        return self._parts.redactor

    @property
    def library(self) -> FragmentLibrary:
        """The Academic's fragment library (best practices, toolchains)."""
        return self._parts.knowledge.library

    @property
    def archive(self) -> SessionRecords:
        """The archived sessions and transcripts, to read (as other processes see them)."""
        return self._parts.archive

    async def tools_gateway(self) -> Gateway:
        """The gateway serving every op, the configured MCP servers' tools included
        (started first), for a front end that serves them (the MCP server)."""
        await self.start_tools()
        return self._parts.gateway

    # -- queries -------------------------------------------------------------
    def list_sessions(self, *, include_closed: bool = False) -> list[Session]:
        return self._sessions.list_sessions(include_closed=include_closed)

    def get_session(self, ref: str) -> Session:
        return self._sessions.resolve(ref)

    def active_session(self) -> Session | None:
        return self._sessions.active_session()

    def get_context(self, ref: str) -> SessionContext:
        return self._sessions.get_context(ref)

    async def transcript(self, session_id: str, *, limit: int | None = None) -> Transcript:
        return await self._sessions.transcript(session_id, limit=limit)

    def transcript_counts(self) -> dict[str, int]:
        return self._sessions.transcript_counts()

    def usage(self, session_id: str | None = None) -> UsageSummary:
        return summarise(session_id, self._parts.archive.usage_by_agent(session_id))

    def status_facts(self, session_id: str) -> StatusFacts:
        """What a status bar shows for ``session_id`` (``status_facts``), as values."""
        return status_facts(self._parts, session_id)

    def describe_sessions(self) -> str:
        return self._parts.describe_sessions()

    def status_text(self, session_id: str) -> str:
        return self._parts.status_text(session_id)

    # -- session verbs -------------------------------------------------------
    async def ensure_session(self) -> Session:
        """The foreground session; the newest open one, or a new one, if none is."""
        return await self._sessions.ensure_session()

    async def switch_session(self, ref: str) -> Session:
        return await self._sessions.switch_session(ref)

    async def suspend_session(self, ref: str | None = None) -> Session:
        return await self._sessions.suspend_session(ref)

    async def resume_session(self, ref: str) -> Session:
        return await self._sessions.resume_session(ref)

    async def complete_session(self, ref: str | None = None, summary: str | None = None) -> Session:
        return await self._sessions.complete_session(ref, summary)

    async def rename_session(self, ref: str, name: str) -> Session:
        return await self._sessions.rename_session(ref, name)

    async def delete_session(self, ref: str) -> Session:
        """Delete a session from the archive for good; refused while it answers."""
        session = self._sessions.resolve(ref)
        if self.turn_running(session.id):
            raise SessionBusyError(session.name)
        return await self._sessions.delete_session(session.id)

    # -- the session's phase ------------------------------------------------------
    def session_phase(self, ref: str) -> SessionPhase:
        """Where the session's planned work stands (``backend.sessions.phases``)."""
        return self._sessions.resolve(ref).phase

    async def set_phase(
        self, ref: str, phase: SessionPhase | str, reason: str, *, approval: str | None = None
    ) -> Session:
        """Move the session's phase along a legal transition, for ``reason``; entering
        execution names the user's approval of the plan (``approval``). Committed with
        its log entry, then announced as a ``SessionPhaseChanged``. Asking for the
        phase it is in changes nothing."""
        target = parse_phase(phase)
        return await self._sessions.set_phase(ref, target, reason, approval=approval)

    async def phase_history(self, ref: str) -> list[PhaseChange]:
        """The session's phase moves, oldest first, as the archive keeps them."""
        return await self._sessions.phase_history(ref)

    # -- requests --------------------------------------------------------------
    async def submit(self, session_id: str, text: str) -> Transcript:
        """Take one line from the user; the Guide routes it.

        Returns the messages recorded: the user's line (with its routing
        decision) and the answer. Requests for agents go only to the session in
        the foreground; commands are accepted from any session.
        """
        session, sessions, guide = self._sessions.get(session_id), self._sessions, self._parts.guide
        text = text.strip()
        if not text:
            return []
        try:
            decision = await guide.route(text, session_id=session.id)
        except CommandError as exc:
            entry = await sessions.record_input(session_id, text, None)
            return [entry, await sessions.notice(session_id, str(exc), error=type(exc).__name__)]
        for_agent = decision.target in AGENT_TARGETS
        if for_agent and session.state is not SessionState.ACTIVE:
            raise SessionNotActiveError(session.id, session.state.value, session.name)
        entry = await sessions.record_input(session_id, text, decision)
        if for_agent:  # its worktree made (again) before the turn, or the session failed
            if (failed := await self.ready_for_turn(session.id)) is not None:
                return [entry, failed]
            async with user_job(self._parts.workers, session_id, decision.target):  # user lane
                return [entry, await self._parts.answers.answer(session_id, decision)]
        try:
            answer, tabular = await run_command(self, guide, session_id, decision)
        except SylkError as exc:
            return [entry, await sessions.notice(session_id, str(exc), error=type(exc).__name__)]
        shape = {"format": "diff"} if (decision.command or {}).get("verb") == "diff" else {}
        return [entry, await sessions.notice(session_id, answer, preformatted=tabular, **shape)]

    async def route(self, text: str, target: str | None = None) -> RouteDecision:
        """The Guide's decision for ``text`` (sent to ``target`` if named), not carried out."""
        return await self._parts.guide.route_to(text, target)

    async def tools_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/tools``: the session's workspace's linters, formatters and test tools."""
        workspace = Path(self._sessions.get(session_id).workspace)
        board = self._parts.questions
        ask = (lambda q: board.ask(q, session_id)) if board.answered_here else None
        return await tools_answer(self._parts.knowledge.tools, workspace, args, ask)

    # -- approvals ---------------------------------------------------------------
    def approval_mode(self, session_id: str | None = None) -> ApprovalMode:
        """The session's effective approval mode; without one, the engine's default
        (the run's ``--approval``, else the config's)."""
        book = self._parts.approvals.book
        return book.mode(session_id) if session_id else book.default_mode()

    async def approval_command(self, session_id: str, mode: str | None) -> str:
        """``/approval [MODE]``: show, or set and keep with the session, its mode."""
        self._sessions.get(session_id)
        return await self._parts.approvals.approval(session_id, mode)

    async def network_command(self, session_id: str, state: str | None) -> str:
        """``/network [on|off]``: may the session's commands reach the network?"""
        self._sessions.get(session_id)
        return await self._parts.approvals.network(session_id, state)

    # -- plans -----------------------------------------------------------------
    async def plan_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/plan [show|approve|reject ID]``: the session's plans, and deciding one."""
        self._sessions.get(session_id)
        answer = await plan_command(self._parts.plans, session_id, args)
        last = session_qa(self._parts).status_line(session_id)  # the last QA or completion
        return f"{answer}\n{last}" if last and args.get("action", "list") == "list" else answer

    async def qa_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/qa [status|run|skip-tests|override|stop]``: the session's QA after a plan."""
        qa = session_qa(self._parts)
        return await qa.command(self._sessions.get(session_id).id, args.get("action", "status"))

    def check_model(self, spec: str) -> str:
        """``PROVIDER[/MODEL]`` as it would be kept, or a typed error if it cannot be used."""
        return check_spec(self._parts.turns, spec).label

    async def model_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/model [ROLE] [PROVIDER/MODEL] | reset [ROLE]``: the session's models."""
        return await model_command(self._parts.turns, self._sessions, session_id, args)

    async def wait_qa(self, session_id: str) -> QaRecord | None:
        """Until the session's QA (and a fix DAG it waits on) is idle; where it stands."""
        return await session_qa(self._parts).wait(self._sessions.get(session_id).id)

    async def plans(self, session_id: str) -> list[StoredPlan]:
        """Every version of every plan of the session, oldest first, with its status."""
        return await self._parts.plans.plans(self._sessions.get(session_id).id)

    # -- pipelines ---------------------------------------------------------------------
    async def phase_command(self, session_id: str, args: dict[str, str]) -> str:
        """What the user said in a plan's phase ("stop", "status?", "also add X", "why
        ...?"), routed by the phase rules: carried out by the session's plan talk."""
        talk = self._parts.talk
        if talk is None:
            raise CommandError("this engine talks to no plan by phase")
        return await talk.command(self._sessions.get(session_id).id, args)

    async def task_command(self, session_id: str, args: dict[str, str]) -> str:
        """``/task ID prompt|query|interrupt|ignore_inspector|ignore_tester [TEXT]``: steer
        a pipeline of the session (a plan's engineer node, or an ``@engineer`` request)."""
        session = self._sessions.get(session_id)
        task_id, verb = args.get("task_id", ""), args.get("verb", "")
        return await pipeline_desk(self._parts).command(
            session.id, task_id, verb, args.get("text", "")
        )

    # -- approved plans run (the Orchestrator) ----------------------------------------
    async def execute_plan(self, session_id: str, plan_id: str) -> dict[str, Any]:
        """Run an approved plan's DAG in the background (an approval starts it too)."""
        return await self._parts.dags.execute(self._sessions.get(session_id).id, plan_id)

    async def dag_status(self, session_id: str, plan_id: str | None = None) -> list[dict[str, Any]]:
        """The session's DAGs (or the plan's): each node's state, attempts and duration."""
        return await self._parts.dags.status(self._sessions.get(session_id).id, plan_id)

    async def cancel_dag(self, session_id: str, plan_id: str) -> dict[str, Any]:
        """Stop the plan's running DAG; the session's phase goes back to planning."""
        return await self._parts.dags.cancel(self._sessions.get(session_id).id, plan_id)

    async def wait_dag(self, session_id: str, plan_id: str) -> DagOutcome | None:
        """Until the plan's running DAG ends; its outcome (None if none was running)."""
        return await self._parts.dags.wait(self._sessions.get(session_id).id, plan_id)

    def turn_running(self, session_id: str) -> bool:
        return self._parts.dispatcher.running(session_id)

    def cancel_turn(self, session_id: str) -> bool:
        """Stop the session's running turn (stream and tools); False if none runs."""
        return self._parts.dispatcher.cancel(session_id)

    # -- checkpoints -----------------------------------------------------------
    async def undo(self, session_id: str) -> UndoOutcome:
        """``/undo``: revert the session's last agent turn that changed files.

        Refused while a turn of the session runs, and when a file the turn changed
        was changed since (then nothing is changed, so nothing is lost).
        """
        session = self._sessions.get(session_id)
        if self.turn_running(session.id):
            raise TurnRunningError()
        return await self._parts.checkpoints.undo(session.id, Path(session.workspace))

    async def session_diff(self, session_id: str) -> SessionDiff:
        """``/diff``: the workspace now against the session's start, bounded."""
        session = self._sessions.get(session_id)
        return await self._parts.checkpoints.diff(session.id, Path(session.workspace))

    # -- questions to the user -----------------------------------------------
    def attach_questions(self) -> Callable[[], None]:
        """A front end that shows questions (QuestionAsked events); returns its detach."""
        return self._parts.questions.attach()

    def answer_question(self, question_id: str, value: str | None) -> bool:
        """Answer (or with None decline) a pending question; False if it is not pending."""
        return self._parts.questions.answer(question_id, value)

    def pending_questions(self, session_id: str | None = None) -> list[QuestionAsked]:
        return self._parts.questions.pending(session_id)
