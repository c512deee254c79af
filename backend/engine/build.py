"""The composition root: every part of an engine, built and wired to the others.

:func:`build` makes an :class:`EngineParts` from an :class:`EngineConfig` and the
settings; the :class:`~backend.engine.Engine` facade works through them. Tests
that need a part (the gateway, the archive, the guide) take it from here, not
from the facade.
"""

from __future__ import annotations

import contextlib
import logging
from functools import partial
from pathlib import Path
from typing import Any

from backend.agents.answering import AnswerPipeline, late_reply
from backend.agents.dispatch import AgentDispatcher
from backend.agents.librarian_cache import LibrarianAnswers
from backend.agents.turns import TurnRunner
from backend.approvals.gate import ApprovalGate
from backend.approvals.session_approvals import METADATA_KEY, ApprovalBook
from backend.approvals.user_commands import ApprovalCommands
from backend.archive.store import Archive
from backend.config.settings import SylkConfig, load_config
from backend.engine.budget_work import install_budgets
from backend.engine.checkpoint_work import install_checkpoints
from backend.engine.config import EngineConfig
from backend.engine.hook_work import HookWork, install_seed_hooks
from backend.engine.knowledge_services import KnowledgeServices
from backend.engine.model_work import guide_classifier
from backend.engine.parts import EngineParts as EngineParts  # noqa: PLC0414 (re-exported)
from backend.engine.parts import ToolServers
from backend.engine.plan_runs.dag_work import DagWork, install_orchestration
from backend.engine.plan_runs.pipeline_work import PipelineWork
from backend.engine.plan_runs.plan_work import plan_desk, plan_wiring
from backend.engine.plan_runs.ray_work import install_ray_pipelines
from backend.engine.session_service import SessionService
from backend.engine.team_work import install_team
from backend.engine.worker_lanes import build_worker_pool, index_gate
from backend.engine.worktree_work import install_worktrees
from backend.errors import SessionNotFoundError
from backend.events import EventStream
from backend.guide.guide import Guide
from backend.guide.routing.decision import RouteDecision, Target
from backend.guide.routing.patterns import classify as classify_text
from backend.guide.routing.router import Router
from backend.guide.status import (
    health_notice,
)
from backend.mcp.client.hub import McpHub
from backend.messages import Message
from backend.orchestration import PoolSlots
from backend.questions import QuestionBoard
from backend.redaction import Redactor
from backend.resources.resource_manager import install_resources
from backend.sandbox import sandbox_support
from backend.sessions.ownership import local_owner
from backend.skills.builtin.architect import PlanWiring
from backend.skills.builtin.catalog import build_gateway
from backend.skills.builtin.guide import GuideWiring
from backend.skills.builtin.sessions import session_skills
from backend.skills.gateway.gateway import Gateway
from backend.skills.gateway.read_guard import install_read_guard
from backend.skills.hooks.agents import consultation_logging
from backend.skills.hooks.builtin import (
    caller_reach,
    file_tracking,
    result_logging,
    route_cache_hooks,
    session_context_injection,
)
from backend.skills.search.embedding import semantic_stage

log = logging.getLogger("sylk.tools")


def build(config: EngineConfig, settings: SylkConfig | None = None) -> EngineParts:
    settings = settings or load_config(config.config_file)
    redactor = Redactor(settings.secrets())
    archive = Archive(
        config.data_dir, url=settings.database_url, pool_size=settings.archive.pool_size
    )
    events = EventStream()
    knowledge = KnowledgeServices(
        data_dir=config.data_dir,
        settings=settings,
        archive=archive,
        redactor=redactor,
        events=events,
        watch=config.watch_files,
    )
    sessions = SessionService(
        archive=archive,
        events=events,
        redactor=redactor,
        workspace=config.workspace,
        promote=knowledge.chronicle.complete_session,
        owner=local_owner(settings.team.user),
    )
    hook_work = HookWork(
        chronicle=knowledge.chronicle,
        session_of=sessions.get,
        update_context=sessions.update_context,
    )

    # The gateway's Guide ops route and report through parts built after it (the
    # router hooks into the gateway): these look them up when called.
    async def route(text: str, target: str | None = None) -> RouteDecision:
        return await guide.route_to(text, target)

    def status(session_id: str) -> str:
        return parts.status_text(session_id)

    wiring = GuideWiring(
        route=route,
        classify=classify_text,
        status=status,
        list_sessions=lambda include_closed=False: sessions.list_sessions(
            include_closed=bool(include_closed)
        ),
        switch_session=sessions.switch_session,
        session_context=sessions.get_context,
    )
    questions = QuestionBoard(events.publish)
    plans = plan_desk(archive, events, questions, assume_yes=config.assume_yes)

    async def plan_request(session_id: str, text: str) -> object:
        decision = RouteDecision(target=Target.ARCHITECT, confidence=1.0, tier="dsl", text=text)
        return await answers.answer(session_id, decision)

    gateway = _gateway(
        knowledge=knowledge,
        archive=archive,
        redactor=redactor,
        settings=settings,
        hook_work=hook_work,
        wiring=wiring,
        plans=plan_wiring(
            plans,
            events,
            has_model=lambda: not turns.choice("architect").offline,
            plan_request=plan_request,
        ),
    )
    gateway.hooks.install(caller_reach(sessions.reach))  # cross-session reads stop at the user
    knowledge.cross_reach = sessions.reach.user_sessions
    read_guard = install_read_guard(gateway)  # edits need a (fresh) read of the file first
    approvals = _approvals(config, settings, sessions, questions, gateway)
    librarian_answers = LibrarianAnswers(knowledge.code, archive)
    mcp = McpHub(settings.mcp_servers, cwd=config.workspace, choices=archive)  # /mcp kept
    checkpoints = install_checkpoints(config, gateway)  # every turn that changes files
    turns = TurnRunner(
        settings=settings,
        archive=archive,
        events=events,
        redactor=redactor,
        gateway=gateway,
        provider_override=config.provider,
        model_override=config.model,
        confine=config.confinement,
        checkpoints=checkpoints,
    )
    guide = Guide(
        router=_router(gateway, turns, sessions),
        settings=settings.guide,
        state_of=lambda sid: sessions.state_of(sid).value,
        on_health=lambda health, previous: events.publish(health_notice(health, previous)),
    )

    async def record_late(reply: Message[Any]) -> None:
        await sessions.append(late_reply(reply))

    dispatcher = AgentDispatcher(
        guide=guide, turns=turns, session_of=sessions.get, on_late_reply=record_late
    )

    async def release(session_id: str) -> None:
        """A finished session's agents stop and its gateway state is dropped."""
        await guide.close_session(session_id)
        gateway.forget_session(session_id)

    sessions.on_release(release)

    async def forget_context(session_id: str) -> None:
        turns.context.forget(session_id)  # its agents' context meters, once it is gone

    sessions.on_discard(forget_context)
    tool_servers = ToolServers(mcp, gateway)
    answers = AnswerPipeline(
        sessions=sessions,
        turns=turns,
        desk=knowledge.desk,
        cache=librarian_answers,
        dispatcher=dispatcher,
        chronicle=knowledge.chronicle,
        start_tools=tool_servers.start,
        settle=hook_work.settle,
        config_source=settings.source,
    )
    workers = build_worker_pool(settings.scheduling, sessions)
    knowledge.code.gate = index_gate(workers)  # index builds as background jobs
    dags = DagWork(
        sessions=sessions,
        desk=plans,
        events=events,
        ask=answers.answer,
        cancel_turns=dispatcher.cancel,
        state_path=config.data_dir / "dags.db",
        run_on_approval=config.run_approved_plans,
        slots=PoolSlots(workers),  # node attempts share the engine's workers
        pipelines=PipelineWork(  # engineer nodes: engineer -> inspector -> tester
            events=events,
            questions=questions,
            tools=knowledge.tools,
            confinement=config.confinement,
            workspace_of=lambda sid: Path(sessions.get(sid).workspace),
        ),
    )
    install_orchestration(gateway, dags)  # the Orchestrator's ops run approved plans
    parts = EngineParts(
        config=config,
        settings=settings,
        redactor=redactor,
        archive=archive,
        events=events,
        knowledge=knowledge,
        sessions=sessions,
        worktrees=install_worktrees(sessions, config.data_dir, settings, events),
        hook_work=hook_work,
        gateway=gateway,
        read_guard=read_guard,
        librarian_answers=librarian_answers,
        mcp=mcp,
        tool_servers=tool_servers,
        turns=turns,
        guide=guide,
        dispatcher=dispatcher,
        questions=questions,
        answers=answers,
        checkpoints=checkpoints,
        approvals=approvals,
        plans=plans,
        dags=dags,
        resources=install_resources(gateway, sessions, events),
        workers=workers,
    )
    install_team(parts)  # the team ops' real handlers
    install_budgets(parts)  # token and cost limits checked before every model call
    install_ray_pipelines(parts)  # [orchestration] backend = "ray": engineer nodes on Ray
    return parts


def _gateway(
    *,
    knowledge: KnowledgeServices,
    archive: Archive,
    redactor: Redactor,
    settings: SylkConfig,
    hook_work: HookWork,
    wiring: GuideWiring,
    plans: PlanWiring,
) -> Gateway:
    """Every built-in wired to the engine's services, the seed's hooks installed."""
    gateway = build_gateway(
        knowledge=knowledge.wiring(),
        embedding=semantic_stage(settings.search.semantic),
        wiring=wiring,
        plans=plans,
    )
    gateway.registry.register_all(session_skills(archive))
    hooks = gateway.hooks
    hooks.install(session_context_injection(hook_work.session_brief))
    hooks.install(file_tracking(hook_work.track_file))
    hooks.install(consultation_logging(hook_work.log_consultation))
    hooks.install(result_logging(log, redactor=redactor))
    install_seed_hooks(hooks, hook_work, redactor)
    return gateway


def _approvals(
    config: EngineConfig,
    settings: SylkConfig,
    sessions: SessionService,
    questions: QuestionBoard,
    gateway: Gateway,
) -> ApprovalCommands:
    """The approval gate on every edit, command and external tool, its settings kept
    with each session (a caller without a stored session keeps them in memory)."""

    def load(session_id: str) -> object:
        try:
            return sessions.get(session_id).metadata.get(METADATA_KEY)
        except SessionNotFoundError:
            return None

    async def save(session_id: str, value: dict[str, Any]) -> None:
        # An MCP client's fresh session is not stored: it lives as long as the connection.
        with contextlib.suppress(SessionNotFoundError):
            await sessions.set_metadata(session_id, METADATA_KEY, value)

    book = ApprovalBook(
        settings.approvals,
        load=load,
        save=save,
        run_mode=config.approval_mode,
        assume_yes=config.assume_yes,
    )
    # Where no sandbox confines commands (another OS, an old kernel, SYLK_SANDBOX=none),
    # every command asks, whatever the mode. Probed once, on first need.
    gate = ApprovalGate(
        book,
        questions,
        sandboxed=lambda: sandbox_support().confined,
        sandbox_level=lambda: sandbox_support().detail,
    )
    gateway.hooks.install(gate.hook())
    gateway.on_forget_session(book.forget)
    return ApprovalCommands(gate)


def _router(gateway: Gateway, turns: TurnRunner, sessions: SessionService) -> Router:
    """The Guide's router, its route cache behind the seed's prompt hooks."""

    # The guide role's model, bounded by [guide] model_tier_* (backend.engine.model_work).
    tier = partial(guide_classifier, turns, sessions.get)
    router = Router(classifier=tier, hooks=gateway.hooks)
    for hook in route_cache_hooks(router.cache):
        gateway.hooks.install(hook)
    return router
