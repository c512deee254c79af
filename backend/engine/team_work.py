"""Wires the team's parts (:mod:`backend.team`) into a built engine.

Called once at the end of :func:`backend.engine.build.build`, when every part exists:
each team part gets what it needs from the engine's parts and installs the real
handlers of the ops it serves.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from backend.engine.plan_runs.pipeline_work import PipelineWork, install_pipelines, pipeline_desk
from backend.engine.plan_runs.task_rollback import install_task_rollback
from backend.engine.quality_work import install_quality_ops
from backend.engine.worker_lanes import PooledQaChecks
from backend.errors import SylkError
from backend.events import EngineEvent, PlanChanged
from backend.guide.routing.decision import RouteDecision, Target
from backend.plans.review import PlanStatus
from backend.sessions.phases import SessionPhase
from backend.team.agent_ops.knowledge_ops import install_archivalist_analysis
from backend.team.agent_ops.research_ops import install_academic_research
from backend.team.fix_plans import FixPlanner, create_fix_handler, fix_plan_id
from backend.team.messages import AgentMessages, install_messages
from backend.team.model_checks import ModelCheckParts
from backend.team.phase_talk import PhaseTalk, Record, install_phase_talk
from backend.team.session_qa import SessionQa
from backend.team.wiring import install_handler

if TYPE_CHECKING:
    from backend.engine.build import EngineParts

log = logging.getLogger(__name__)
PROPOSAL_MOVES_FROM = (SessionPhase.IDLE, SessionPhase.RESEARCH, SessionPhase.COMPLETE)


def install_team(parts: EngineParts) -> None:
    """Give the team ops their handlers (each part below adds its own lines)."""
    # The Inspector's and the Tester's ops: the project's tools, a model where one is set.
    install_quality_ops(parts)
    # Agents talk through the Guide: consults, broadcasts, the engineer's question.
    messages = AgentMessages(
        guide=parts.guide,
        dispatcher=parts.dispatcher,
        session_of=parts.sessions.get,
        set_metadata=parts.sessions.set_metadata,
        consult=parts.knowledge.consult,
        questions=parts.questions,
    )
    install_messages(parts.gateway, messages)
    # The Archivalist's and the Academic's analysis ops (local data, no model).
    install_archivalist_analysis(parts.gateway, parts.knowledge.chronicle)
    knowledge = parts.knowledge
    install_academic_research(
        parts.gateway, knowledge.library, knowledge.desk, parts.config.data_dir
    )
    # Pipelines: /task and guide.task.interact steer them; @engineer runs as one.
    install_pipelines(parts)
    # A pipeline's checks add the model's: task compliance, tests the engineer writes.
    install_model_checks(parts)
    # Talking by phase: status, stop/resume/revise, questions about a plan; the router
    # reads the session's phase so "stop" while a plan runs stops it.
    talk = parts.talk = phase_talk(parts)
    install_phase_talk(parts.gateway, talk)
    parts.guide.router.phase_view = talk.view
    # A change request goes to planning as soon as the Architect proposes its plan.
    parts.events.add_listener(planning_on_proposal(parts))
    # Session QA after a passed plan, the fix loop, the completion summary; /qa.
    install_session_qa(parts)
    # A plan's task killed mid-way restarts clean: its edits recorded as they land, put
    # back when its DAG resumes.
    install_task_rollback(parts)


def install_model_checks(parts: EngineParts) -> None:
    """Pipelines check with the model where one is configured (``ModelCheckParts``)."""
    work = parts.dags.pipelines
    if not isinstance(work, PipelineWork):
        return

    async def patch(session_id: str, workspace: Path) -> str:
        return (await parts.checkpoints.diff(session_id, workspace)).patch

    work.model_checks = ModelCheckParts(
        has_model=lambda role: not parts.turns.choice(role).offline, patch=patch
    )


def planning_on_proposal(parts: EngineParts) -> Callable[[EngineEvent], None]:
    """A listener: a plan awaiting approval moves its session's phase to planning (from
    idle, research or complete; a QA fix plan leaves inspection and testing alone)."""
    tasks: set[asyncio.Task[None]] = set()

    async def move(session_id: str, plan_id: str, version: int) -> None:
        try:
            if parts.sessions.get(session_id).phase in PROPOSAL_MOVES_FROM:
                reason = f"plan {plan_id} v{version} was proposed"
                await parts.sessions.set_phase(session_id, SessionPhase.PLANNING, reason)
        except SylkError as exc:  # the session ended or moved meanwhile: nothing to do
            log.info("phase not moved to planning for plan %s: %s", plan_id, exc)

    def on_event(event: EngineEvent) -> None:
        if not isinstance(event, PlanChanged) or event.session_id is None:
            return
        if event.status != PlanStatus.AWAITING_APPROVAL:
            return
        task = asyncio.get_running_loop().create_task(
            move(event.session_id, event.plan_id, event.version)
        )
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    return on_event


def phase_talk(parts: EngineParts) -> PhaseTalk:
    """The session's plan talk (status, interrupts, questions) over the engine's parts."""

    async def ask_architect(session_id: str, text: str) -> Record:
        decision = RouteDecision(target=Target.ARCHITECT, confidence=1.0, tier="dsl", text=text)
        return await parts.answers.answer(session_id, decision)

    return PhaseTalk(
        sessions=parts.sessions,
        desk=parts.plans,
        dags=parts.dags,
        ask_architect=ask_architect,
        has_model=lambda: not parts.turns.choice("architect").offline,
        waiting=lambda sid: [q.question.title for q in parts.questions.pending(sid)],
        pipelines=lambda sid: pipeline_lines(parts, sid),
    )


def pipeline_lines(parts: EngineParts, session_id: str) -> list[str]:
    """One line per live pipeline of the session: its task, state and loop."""
    try:
        tasks = pipeline_desk(parts).running(session_id)
    except TypeError:  # engineer nodes run without pipelines here
        return []
    return [f"{t.label}: {t.pipeline.state.value}, loop {t.pipeline.context.loop}/"
            f"{t.pipeline.max_loops}" for t in tasks]  # fmt: skip


def install_session_qa(parts: EngineParts) -> SessionQa:
    """QA follows every passed DAG; ``architect.dag.create_fix`` makes fix plans."""

    async def ask_architect(session_id: str, text: str) -> object:
        decision = RouteDecision(target=Target.ARCHITECT, confidence=1.0, tier="dsl", text=text)
        return await parts.answers.answer(session_id, decision)

    async def notify(session_id: str, text: str) -> object:
        return await parts.sessions.notice(session_id, text, qa="fix_plan")

    def pipeline_notes(session_id: str, plans: list[str]) -> list[str]:
        try:
            tasks = pipeline_desk(parts).finished(session_id)
        except TypeError:  # engineer nodes run without pipelines here
            return []
        return [f"{t.label}: {note}" for t in tasks if t.plan_id in plans
                for note in t.pipeline.context.notes]  # fmt: skip

    planner = FixPlanner(
        parts.plans, has_model=lambda: not parts.turns.choice("architect").offline,
        ask_architect=ask_architect, notify=notify,
    )  # fmt: skip
    qa = SessionQa(
        sessions=parts.sessions, checkpoints=parts.checkpoints,
        checks=PooledQaChecks(parts.knowledge.tools, parts.config.confinement,
                              workers=parts.workers), planner=planner,  # background lane
        desk=parts.plans, chronicle=parts.knowledge.chronicle, questions=parts.questions,
        add_listener=parts.events.add_listener, dags=parts.dags, pipeline_notes=pipeline_notes,
    )  # fmt: skip

    async def next_fix_id(session_id: str) -> tuple[str, str]:
        record = qa.record(session_id)
        root = record.plan_id if record is not None else "session"
        taken = {p.plan_id for p in await parts.plans.plans(session_id)}
        number = 1
        while fix_plan_id(root, number) in taken:
            number += 1
        return fix_plan_id(root, number), root

    install_handler(
        parts.gateway, "architect.dag.create_fix", create_fix_handler(planner, next_fix_id)
    )
    parts.dags.after_passed = qa
    return qa


def session_qa(parts: EngineParts) -> SessionQa:
    """The engine's session QA (``/qa``, ``Engine.wait_qa``)."""
    qa = parts.dags.after_passed
    if not isinstance(qa, SessionQa):
        raise TypeError("this engine runs no session QA")
    return qa
